import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { InvalidArgumentsError, ToolError } from '../../src/base/errors';
import { execCommandTool } from '../../src/features/processes/common/tools/execCommand';
import { processStatusTool } from '../../src/features/processes/common/tools/processStatus';
import { writeStdinTool } from '../../src/features/processes/common/tools/writeStdin';
import type { ProcessToolsFixture } from './helpers/processToolsFixture';
import { processToolsFixture } from './helpers/processToolsFixture';

/** write_stdin { eof: true }: ends a command's input, so programs that read to the end of it finish. */
describe('write_stdin eof', function () {
  this.timeout(30_000);
  let f: ProcessToolsFixture;

  beforeEach(async () => {
    f = await processToolsFixture();
  });

  afterEach(async () => {
    await f.dispose();
  });

  async function start(command: string[], tty: boolean): Promise<string> {
    const r = await f.call(execCommandTool, { workspace_id: 'proj', command, tty, occupancy: 'shared' });
    return r.process_id as string;
  }

  async function exitedOk(id: string): Promise<void> {
    const s = await f.call(processStatusTool, { process_id: id });
    assert.equal(s.state, 'exited');
    assert.equal(s.termination, 'exited');
    assert.equal(s.exit_code, 0);
  }

  const invalid = (pattern: RegExp) => (e: unknown) => e instanceof InvalidArgumentsError && pattern.test(e.message);

  describe('on pipes: closes stdin', () => {
    it('lets sort finish, then refuses more input with "stdin is closed"', async () => {
      const id = await start(['sort'], false);
      await f.call(writeStdinTool, { process_id: id, data: 'pear\napple\nfig\n' });
      assert.deepEqual(await f.call(writeStdinTool, { process_id: id, eof: true }), { process_id: id, bytes_written: 0 });
      assert.equal(await f.readAll(id), 'apple\nfig\npear\n');
      await exitedOk(id);
    });

    it('lets wc -c count input that does not end a line', async () => {
      const id = await start(['wc', '-c'], false);
      assert.deepEqual(await f.call(writeStdinTool, { process_id: id, data: 'hello', eof: true }), { process_id: id, bytes_written: 5 });
      assert.equal((await f.readAll(id)).trim(), '5');
      await exitedOk(id);
    });

    it('lets cat > file write the file and exit', async () => {
      const id = await start(['sh', '-c', 'cat > out.txt'], false);
      await f.call(writeStdinTool, { process_id: id, data: 'first line\nlast, no newline', eof: true });
      await f.readAll(id);
      await exitedOk(id);
      assert.equal(fs.readFileSync(path.join(f.root, 'out.txt'), 'utf8'), 'first line\nlast, no newline');
    });

    it('answers writes after the end of input with INVALID_ARGUMENTS, not PROCESS_EXITED', async () => {
      // The program keeps running after its input ended, so only our side knows stdin is closed.
      const id = await start(['sh', '-c', 'cat >/dev/null; sleep 30'], false);
      await f.call(writeStdinTool, { process_id: id, eof: true });
      await assert.rejects(f.call(writeStdinTool, { process_id: id, data: 'more' }), invalid(/stdin of process .* is closed/));
      await assert.rejects(f.call(writeStdinTool, { process_id: id, eof: true }), invalid(/is closed/));
      const s = await f.call(processStatusTool, { process_id: id });
      assert.equal(s.state, 'running');
    });
  });

  describe('on a PTY: sends the end-of-file character', () => {
    it('lets sort finish', async () => {
      const id = await start(['sort'], true);
      await f.call(writeStdinTool, { process_id: id, data: 'pear\napple\n' });
      await f.call(writeStdinTool, { process_id: id, eof: true });
      const out = await f.readAll(id);
      // The terminal echoes the input, then sort prints.
      assert.ok(out.endsWith('apple\r\npear\r\n'), JSON.stringify(out));
      await exitedOk(id);
    });

    it('lets wc -c count a line that was not ended (Ctrl-D twice)', async () => {
      const id = await start(['wc', '-c'], true);
      await f.call(writeStdinTool, { process_id: id, data: 'hello', eof: true });
      const out = await f.readAll(id);
      assert.match(out, /^hello\s*5\r\n$/);
      await exitedOk(id);
    });

    it('lets cat > file write the file, and the terminal takes input afterwards', async () => {
      const id = await start(['sh', '-c', 'cat > a.txt; cat > b.txt'], true);
      await f.call(writeStdinTool, { process_id: id, data: 'no newline', eof: true });
      await f.call(writeStdinTool, { process_id: id, data: 'two\nlines\n' });
      await f.call(writeStdinTool, { process_id: id, eof: true });
      await f.readAll(id);
      await exitedOk(id);
      assert.equal(fs.readFileSync(path.join(f.root, 'a.txt'), 'utf8'), 'no newline');
      assert.equal(fs.readFileSync(path.join(f.root, 'b.txt'), 'utf8'), 'two\nlines\n');
    });
  });

  it('needs data or eof, and answers an exited process with PROCESS_EXITED', async () => {
    const id = await start(['true'], false);
    await assert.rejects(f.call(writeStdinTool, { process_id: id }), invalid(/needs data, eof/));
    await f.readAll(id);
    await assert.rejects(f.call(writeStdinTool, { process_id: id, eof: true }), (e: unknown) => ToolError.is(e, 'PROCESS_EXITED'));
  });
});
