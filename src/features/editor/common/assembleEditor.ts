// The editor module as the composition starts it: the feed that follows what edits wrote for the language servers'
// reports, the editor tools, and the per-call hook that hands each session those reports (`diagnostics_update`).
import type { AsyncDisposableStore } from '../../../base/disposable';
import type { CallHook } from '../../../kernel/callHooks';
import type { AnyTool } from '../../../kernel/tool';
import { diagnosticsHook } from './diagnostics';
import { DiagnosticsFeed } from './diagnosticsFeed';
import type { DiagnosticsFeedOptions } from './diagnosticsFeed';
import { editorTools } from './editorTools';
import type { EditorToolDeps } from './editorTools';

export interface EditorModule {
  readonly diagnosticsFeed: DiagnosticsFeed;
  readonly tools: readonly AnyTool[];
  readonly hook: CallHook;
}

export function assembleEditor(
  o: Omit<EditorToolDeps, 'diagnosticsFeed'> & Pick<DiagnosticsFeedOptions, 'versionOf'>,
  owned: AsyncDisposableStore,
): EditorModule {
  const diagnosticsFeed = owned.add(new DiagnosticsFeed({ language: o.language, settleMs: o.diagnosticsSettleMs, versionOf: o.versionOf, logger: o.logger }));
  return {
    diagnosticsFeed,
    tools: editorTools({ workspaces: o.workspaces, fs: o.fs, logger: o.logger, language: o.language, diagnosticsFeed, diagnosticsSettleMs: o.diagnosticsSettleMs, runner: o.runner }),
    hook: diagnosticsHook(diagnosticsFeed),
  };
}
