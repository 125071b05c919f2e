import * as vscode from 'vscode';

/**
 * The one scheme of every review document: both sides of a held patch and of a check_only preview, a work's
 * baseline, a frozen work's checkpoint and the accepted text of a review after the write.
 */
export const REVIEW_SCHEME = 'codespace-review';

/** Which review a document belongs to: each kind is served by the module that owns that review. */
export type ReviewKind = 'approval' | 'preview' | 'work' | 'frozen' | 'after';
const KINDS: readonly ReviewKind[] = ['approval', 'preview', 'work', 'frozen', 'after'];

/** One review document: its kind, its side (lower-case letters and `-`), the id of its review unit and its path. */
export interface ReviewDocumentRef {
  readonly kind: ReviewKind;
  readonly side: string;
  /** The review unit: a hold, a preview, a work, a commit, a review after the write. Any non-empty string without NUL. */
  readonly id: string;
  /** The URI path, `/` first: a workspace-relative path after the `/`, or the path of the file's `file:` URI. */
  readonly path: string;
}

/**
 * The id inside the authority, which URIs compare and print in lower case: `[a-z0-9_-]` stay, every other UTF-16
 * unit is `~` and four lower-case hex digits, so any id survives and has exactly one spelling.
 */
function encodeId(id: string): string {
  let out = '';
  for (let i = 0; i < id.length; i++) {
    const c = id.charAt(i);
    out += /[a-z0-9_-]/.test(c) ? c : `~${id.charCodeAt(i).toString(16).padStart(4, '0')}`;
  }
  return out;
}

function decodeId(raw: string): string | undefined {
  if (!/^(?:[a-z0-9_-]|~[0-9a-f]{4})+$/.test(raw)) return undefined;
  return raw.replace(/~([0-9a-f]{4})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

const validId = (id: unknown): id is string => typeof id === 'string' && id !== '' && !id.includes('\0');

/**
 * `codespace-review://<kind>.<side>.<id>/<path>`: one codec for every review document. Throws on anything it could
 * not decode back to the same reference.
 */
export function toReviewUri(ref: ReviewDocumentRef): vscode.Uri {
  if (!KINDS.includes(ref.kind)) throw new Error(`review URI: invalid kind ${JSON.stringify(ref.kind)}`);
  if (!/^[a-z][a-z-]*$/.test(ref.side)) throw new Error(`review URI: invalid side ${JSON.stringify(ref.side)}`);
  if (!validId(ref.id)) throw new Error(`review URI: invalid ${ref.kind} id ${JSON.stringify(ref.id)}`);
  if (!ref.path.startsWith('/')) throw new Error(`review URI: invalid path ${JSON.stringify(ref.path)}`);
  return vscode.Uri.from({ scheme: REVIEW_SCHEME, authority: `${ref.kind}.${ref.side}.${encodeId(ref.id)}`, path: ref.path });
}

/**
 * The reference a review URI names, or undefined for any other URI and for anything malformed. Only the canonical
 * spelling is accepted (no query, no fragment, the id encoded as `toReviewUri` encodes it), so one document has one
 * URI: the tab and document lookups rely on it.
 */
export function fromReviewUri(uri: vscode.Uri): ReviewDocumentRef | undefined {
  if (uri.scheme !== REVIEW_SCHEME || uri.query !== '' || uri.fragment !== '' || !uri.path.startsWith('/')) return undefined;
  const m = /^([a-z]+)\.([a-z][a-z-]*)\.(.+)$/.exec(uri.authority);
  if (!m) return undefined;
  const [, kind, side, raw] = m as unknown as [string, ReviewKind, string, string];
  const id = decodeId(raw);
  if (!KINDS.includes(kind) || id === undefined || !validId(id) || encodeId(id) !== raw) return undefined;
  return { kind, side, id, path: uri.path };
}

/**
 * The one file system of the review scheme. Each module serves the kinds of its own reviews (`serve`) with a
 * provider of its own; every call goes to the provider of the URI's kind, and a URI of no served kind is not found.
 * A read-only kind says so in each document's stat (`FilePermission.Readonly`), so the editor shows it locked.
 */
class ReviewDocuments implements vscode.FileSystemProvider {
  private readonly emitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.emitter.event;
  private readonly providers = new Map<ReviewKind, vscode.FileSystemProvider>();
  private registration: vscode.Disposable | undefined;

  /** Serves `kinds` with `provider` until the returned disposable is disposed. */
  serve(kinds: readonly ReviewKind[], provider: vscode.FileSystemProvider): vscode.Disposable {
    for (const kind of kinds) {
      if (this.providers.has(kind)) throw new Error(`review documents: ${kind} is served already`);
    }
    for (const kind of kinds) this.providers.set(kind, provider);
    const relay = provider.onDidChangeFile((events) => this.emitter.fire(events));
    this.registration ??= vscode.workspace.registerFileSystemProvider(REVIEW_SCHEME, this, { isCaseSensitive: true });
    return new vscode.Disposable(() => {
      relay.dispose();
      for (const kind of kinds) if (this.providers.get(kind) === provider) this.providers.delete(kind);
      if (this.providers.size === 0) {
        this.registration?.dispose();
        this.registration = undefined;
      }
    });
  }

  private of(uri: vscode.Uri): vscode.FileSystemProvider {
    const kind = fromReviewUri(uri)?.kind;
    const provider = kind === undefined ? undefined : this.providers.get(kind);
    if (!provider) throw vscode.FileSystemError.FileNotFound(uri);
    return provider;
  }

  watch(uri: vscode.Uri, options: { readonly recursive: boolean; readonly excludes: readonly string[] }): vscode.Disposable {
    const kind = fromReviewUri(uri)?.kind;
    const provider = kind === undefined ? undefined : this.providers.get(kind);
    return provider ? provider.watch(uri, options) : new vscode.Disposable(() => undefined);
  }

  stat(uri: vscode.Uri): vscode.FileStat | Thenable<vscode.FileStat> {
    return this.of(uri).stat(uri);
  }

  readDirectory(uri: vscode.Uri): [string, vscode.FileType][] | Thenable<[string, vscode.FileType][]> {
    return this.of(uri).readDirectory(uri);
  }

  createDirectory(uri: vscode.Uri): void | Thenable<void> {
    return this.of(uri).createDirectory(uri);
  }

  readFile(uri: vscode.Uri): Uint8Array | Thenable<Uint8Array> {
    return this.of(uri).readFile(uri);
  }

  writeFile(uri: vscode.Uri, content: Uint8Array, options: { readonly create: boolean; readonly overwrite: boolean }): void | Thenable<void> {
    return this.of(uri).writeFile(uri, content, options);
  }

  delete(uri: vscode.Uri, options: { readonly recursive: boolean }): void | Thenable<void> {
    return this.of(uri).delete(uri, options);
  }

  rename(oldUri: vscode.Uri, newUri: vscode.Uri, options: { readonly overwrite: boolean }): void | Thenable<void> {
    return this.of(oldUri).rename(oldUri, newUri, options);
  }
}

/** The review scheme's file system: one per extension host, as the scheme is. */
export const reviewDocuments = new ReviewDocuments();
