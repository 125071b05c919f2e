// The debug module as the composition starts it: the state kept from the editor debugger's events and the debug tools.
import type { AsyncDisposableStore } from '../../../base/disposable';
import type { AnyTool } from '../../../kernel/tool';
import { DebugSessions } from './debugSessions';
import { debugTools } from './debugTools';
import type { DebugToolDeps } from './debugTools';

export interface DebugModule {
  readonly tools: readonly AnyTool[];
}

export function assembleDebug(o: Omit<DebugToolDeps, 'sessions'>, owned: AsyncDisposableStore): DebugModule {
  const sessions = o.debug ? owned.add(new DebugSessions(o.debug)) : undefined;
  return { tools: debugTools({ ...o, sessions }) };
}
