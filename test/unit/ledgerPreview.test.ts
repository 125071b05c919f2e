import * as assert from 'node:assert/strict';
import { OperationLedger } from '../../src/kernel/ledger/operationLedger';
import { InMemoryJournal } from '../../src/base/journal';

describe('ledger: a preview cut off by a crash', () => {
  it('is settled as not_applied, never as applied', async () => {
    const journal = new InMemoryJournal();
    const first = new OperationLedger({ journal });
    await first.open();
    // A preview records no changes: it is minted, then the process dies before its finish record.
    await first.mint({ operation_key: 'preview-1', args_hash: 'sha256:x', workspace_id: 'demo', files: [{ path: 'a.txt', kind: 'update' }], changes: [] });

    const second = new OperationLedger({ journal });
    const summary = await second.open();
    assert.equal(summary.pending, 1);
    const outcomes = await second.reconcile(async () => 'sha256:whatever');
    assert.equal(outcomes[0]?.status, 'not_applied');
    assert.equal(second.get({ operation_key: 'preview-1' }).status, 'not_applied');
  });
});
