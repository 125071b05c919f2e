// The few calls of yauzl and yazl (vsce's own zip libraries) the VSIX tests use: no @types packages for them.
declare module 'yauzl' {
  import type { Readable } from 'node:stream';
  export interface Entry {
    readonly fileName: string;
  }
  export interface ZipFile {
    readEntry(): void;
    openReadStream(entry: Entry, callback: (err: Error | null, stream: Readable) => void): void;
    on(event: 'entry', listener: (entry: Entry) => void): this;
    on(event: 'end', listener: () => void): this;
    on(event: 'error', listener: (err: Error) => void): this;
  }
  export function open(path: string, options: { lazyEntries: boolean }, callback: (err: Error | null, zip: ZipFile) => void): void;
}
declare module 'yazl' {
  import type { Readable } from 'node:stream';
  export class ZipFile {
    addBuffer(buffer: Buffer, name: string): void;
    end(): void;
    readonly outputStream: Readable;
  }
}
