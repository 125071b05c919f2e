import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The writes of a many-file apply with nothing else around them: no reading, planning, journal or confinement. A
 * diagnosis for the patch group, which runs it in the extension host and in a plain Node process on the same files:
 *  - `rename`: the new bytes into a temp file beside each file, then a rename over it, which is how `apply_patch`
 *    replaces every file it changes (the file is whole at every instant);
 *  - `recreate`: remove each file and create it anew, which is how `git apply` writes (the file is missing in between).
 * Run as a script (`node replaceLoop.js <list.json> <way>`), it prints its report as JSON.
 */
export type ReplaceWay = 'rename' | 'recreate';

export interface ReplaceLoopReport {
  readonly ms: number;
  readonly files: number;
}

/** A JSON file holding `[absolutePath, newContent][]`: what each loop writes. */
export function readReplaceList(listFile: string): Array<[string, string]> {
  return JSON.parse(fs.readFileSync(listFile, 'utf8')) as Array<[string, string]>;
}

export function replaceLoop(list: ReadonlyArray<readonly [string, string]>, way: ReplaceWay): ReplaceLoopReport {
  // The bytes are made before the clock starts: only the file operations are timed.
  const items = list.map(([file, content]) => ({ file, temp: path.join(path.dirname(file), `.${path.basename(file)}.replace-loop.tmp`), bytes: Buffer.from(content, 'utf8') }));
  const t0 = performance.now();
  for (const { file, temp, bytes } of items) {
    if (way === 'rename') {
      writeNew(temp, bytes);
      fs.renameSync(temp, file);
    } else {
      fs.unlinkSync(file);
      writeNew(file, bytes);
    }
  }
  return { ms: performance.now() - t0, files: items.length };
}

function writeNew(file: string, bytes: Buffer): void {
  const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, 0o644);
  try {
    fs.writeSync(fd, bytes);
  } finally {
    fs.closeSync(fd);
  }
}

if (require.main === module) {
  const [listFile, way] = process.argv.slice(2);
  if (!listFile || (way !== 'rename' && way !== 'recreate')) {
    process.stderr.write('usage: node replaceLoop.js <list.json> rename|recreate\n');
    process.exit(2);
  }
  process.stdout.write(`${JSON.stringify(replaceLoop(readReplaceList(listFile), way))}\n`);
}
