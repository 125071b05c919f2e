// The tasks module as the composition starts it: the task tools over the editor's tasks (absent in plain Node, where
// they answer UNAVAILABLE), running each task through exec_command's own operation.
import type { AnyTool } from '../../../kernel/tool';
import { taskTools } from './taskTools';
import type { TaskToolDeps } from './taskTools';

export interface TasksModule {
  readonly tools: readonly AnyTool[];
}

export function assembleTasks(deps: TaskToolDeps): TasksModule {
  return { tools: taskTools(deps) };
}
