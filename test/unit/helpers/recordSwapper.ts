// A concurrent adversary for the discovery reader, run as its own process so it truly races it:
//   node recordSwapper.js <path> <regular-file-text> <symlink-target>
// Puts at <path>, by atomic renames, a regular 0600 file with the given text, then a symlink to <symlink-target>,
// over and over: a reader that checks the entry and then opens it by name may find the other one in between.
// Prints "ready" once, then {"swaps": N} on SIGTERM and exits.
import * as fs from 'node:fs';

const [target, text, linkTo] = process.argv.slice(2) as [string, string, string];
let swaps = 0;
let stop = false;
process.on('SIGTERM', () => {
  stop = true;
});
function batch(): void {
  for (let n = 0; n < 20; n++) {
    const tmp = `${target}.swap-${process.pid}`;
    try {
      if (swaps % 2 === 0) fs.writeFileSync(tmp, text, { mode: 0o600 });
      else fs.symlinkSync(linkTo, tmp);
      fs.renameSync(tmp, target);
    } catch {
      fs.rmSync(tmp, { force: true });
    }
    swaps++;
  }
  if (stop) {
    process.stdout.write(JSON.stringify({ swaps }) + '\n', () => process.exit(0));
    return;
  }
  setImmediate(batch);
}
process.stdout.write('ready\n');
batch();
