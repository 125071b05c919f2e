// A concurrent adversary for confinement tests, run as its own process so it truly races the code under test:
//   node linkSwapper.js <link> <targetA> <targetB> [<link> <targetA> <targetB> ...]
// Swaps each link between its two targets by renaming a fresh link over it (atomic, so the link always exists and
// points one way or the other), a few times every millisecond: often enough to land inside every operation's
// window, seldom enough that some operations also run from start to end on one side. On SIGTERM it prints
// {"swaps": N} and exits; meanwhile it prints the count every 100 swaps.
import * as fs from 'node:fs';

const args = process.argv.slice(2);
const links: { link: string; targets: [string, string] }[] = [];
for (let i = 0; i + 2 < args.length + 1 && i < args.length; i += 3) {
  links.push({ link: args[i] as string, targets: [args[i + 1] as string, args[i + 2] as string] });
}
let swaps = 0;
let stop = false;
process.on('SIGTERM', () => {
  stop = true;
});

function batch(): void {
  for (let n = 0; n < 3; n++) {
    for (const [i, { link, targets }] of links.entries()) {
      const tmp = `${link}.swap-${process.pid}-${i}`;
      try {
        fs.symlinkSync(targets[swaps % 2], tmp);
        fs.renameSync(tmp, link);
      } catch {
        fs.rmSync(tmp, { force: true });
      }
    }
    swaps++;
    if (swaps % 100 === 0) process.stdout.write(`${swaps}\n`);
  }
  if (stop) {
    process.stdout.write(JSON.stringify({ swaps }) + '\n', () => process.exit(0));
    return;
  }
  setTimeout(batch, 1);
}
process.stdout.write('ready\n');
batch();
