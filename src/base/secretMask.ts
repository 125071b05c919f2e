/**
 * Masks secrets in text bound for a log: every registered secret, bearer credentials and MCP session ids,
 * whatever component wrote the line.
 */
export class SecretMask {
  private readonly secrets = new Set<string>();

  /** Registers a value that must never appear in a log (short values are ignored: they would mask noise). */
  add(value: string): void {
    if (value.length >= 8) this.secrets.add(value);
  }

  apply(text: string): string {
    let out = text;
    for (const s of this.secrets) out = out.split(s).join('«secret»');
    out = out.replace(/(\b(?:Bearer|Basic)\s+)[A-Za-z0-9._~+/=-]+/gi, '$1«secret»');
    out = out.replace(/(mcp-session-id["']?\s*[:=]\s*["']?)[0-9A-Za-z-]{8,}/gi, '$1«session»');
    out = out.replace(/([?&](?:token|access_token)=)[^&\s]+/gi, '$1«secret»');
    return out;
  }
}
