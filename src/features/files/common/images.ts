/** Images `read` returns as MCP image content, by their magic bytes (never by the file name alone). */
export type ImageMime = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

/** Largest image `read` returns (its base64 is a third larger again). */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

function startsWith(bytes: Uint8Array, sig: readonly number[], at = 0): boolean {
  if (bytes.length < at + sig.length) return false;
  for (let i = 0; i < sig.length; i++) if (bytes[at + i] !== sig[i]) return false;
  return true;
}

const ascii = (s: string): number[] => [...s].map((c) => c.charCodeAt(0));

/** The image type the bytes begin with, or undefined. PNG, JPEG, GIF (87a/89a) and WebP (RIFF…WEBP). */
export function sniffImage(bytes: Uint8Array): ImageMime | undefined {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(bytes, ascii('GIF87a')) || startsWith(bytes, ascii('GIF89a'))) return 'image/gif';
  if (startsWith(bytes, ascii('RIFF')) && startsWith(bytes, ascii('WEBP'), 8)) return 'image/webp';
  return undefined;
}
