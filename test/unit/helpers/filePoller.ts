// A reader racing a patch, in its own process: polls every listed file as fast as it can and records each time a
// file is missing or holds anything but one of its two allowed contents (a partial write, an empty temp state).
//   node filePoller.js <manifest.json>   where the manifest is { "<abs path>": ["<sha256 hex>", "<sha256 hex>"] }
// On SIGTERM it prints {"reads": N, "missing": N, "partial": N, "examples": [...]} and exits.
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';

const manifest = JSON.parse(fs.readFileSync(process.argv[2] as string, 'utf8')) as Record<string, [string, string]>;
const entries = Object.entries(manifest);
const report = { reads: 0, missing: 0, partial: 0, examples: [] as string[] };
let stop = false;
process.on('SIGTERM', () => {
  stop = true;
});

function round(): void {
  for (const [file, allowed] of entries) {
    report.reads++;
    let bytes: Buffer;
    try {
      bytes = fs.readFileSync(file);
    } catch (err) {
      report.missing++;
      if (report.examples.length < 5) report.examples.push(`${(err as NodeJS.ErrnoException).code} ${file}`);
      continue;
    }
    const hash = createHash('sha256').update(bytes).digest('hex');
    if (!allowed.includes(hash)) {
      report.partial++;
      if (report.examples.length < 5) report.examples.push(`${bytes.length} bytes in ${file}`);
    }
  }
  if (stop) {
    process.stdout.write(JSON.stringify(report) + '\n', () => process.exit(0));
    return;
  }
  setImmediate(round);
}
process.stdout.write('ready\n');
round();
