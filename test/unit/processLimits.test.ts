import * as assert from 'node:assert/strict';
import { InvalidArgumentsError } from '../../src/base/errors';
import { execCommandTool } from '../../src/features/processes/common/tools/execCommand';
import { argMax } from '../../src/features/processes/node/processTable';
import type { ProcessToolsFixture } from './helpers/processToolsFixture';
import { processToolsFixture } from './helpers/processToolsFixture';

/** What execve would refuse (E2BIG, ENAMETOOLONG) is refused before spawning, naming the limit. */
describe('process limits: arguments, environment and paths', function () {
  this.timeout(30_000);
  let f: ProcessToolsFixture;

  beforeEach(async () => {
    f = await processToolsFixture();
  });

  afterEach(async () => {
    await f.dispose();
  });

  const invalid = (pattern: RegExp) => (e: unknown) => e instanceof InvalidArgumentsError && pattern.test(e.message);
  const exec = (args: Record<string, unknown>) => f.call(execCommandTool, { workspace_id: 'proj', occupancy: 'shared', ...args });

  for (const tty of [false, true]) {
    const mode = tty ? 'pty' : 'pipes';

    it(`refuses a 1 MiB argument (${mode})`, async () => {
      await assert.rejects(exec({ command: ['echo', 'x'.repeat(1024 * 1024)], tty }), invalid(/command\[1\] is 1048576 bytes.*MAX_ARG_STRLEN/));
      assert.deepEqual(f.supervisor.list(), []);
    });

    it(`refuses arguments that together exceed ARG_MAX (${mode})`, async () => {
      const many = Array.from({ length: Math.ceil(argMax() / (100 * 1024)) + 1 }, () => 'y'.repeat(100 * 1024));
      await assert.rejects(exec({ command: ['echo', ...many], tty }), invalid(/ARG_MAX/));
    });

    it(`refuses an environment variable over the per-string limit (${mode})`, async () => {
      f.env = { ...f.env, HUGE: 'z'.repeat(200 * 1024) };
      await assert.rejects(exec({ command: ['true'], tty }), invalid(/HUGE .*MAX_ARG_STRLEN/));
    });

    it(`refuses a 5,000-character program name, and one name over 255 bytes (${mode})`, async () => {
      await assert.rejects(exec({ command: ['p'.repeat(5000)], tty }), invalid(/program name is 5000 bytes.*PATH_MAX/));
      await assert.rejects(exec({ command: ['./' + 'p'.repeat(300)], tty }), invalid(/program name .* 300 bytes.*NAME_MAX/));
    });
  }

  it('refuses a 5,000-character cwd, as one name and as a deep path', async () => {
    await assert.rejects(exec({ command: ['pwd'], cwd: 'd'.repeat(5000) }), invalid(/cwd .*NAME_MAX/));
    await assert.rejects(exec({ command: ['pwd'], cwd: 'abc/'.repeat(1250) }), invalid(/cwd .*PATH_MAX/));
  });

  it('still runs an argument just under the per-string limit', async () => {
    const r = await exec({ command: ['sh', '-c', 'printf %s "$1" | wc -c', 'sh', 'w'.repeat(100 * 1024)] });
    assert.equal((await f.readAll(r.process_id as string)).trim(), String(100 * 1024));
  });
});
