// The works module's resources and prompt for agents (src/kernel/agentResources.ts): each open work's instruction
// queue as codespace://steering/{work_id}, and the agent-loop prompt. src/mcp serves them in both revisions.
import { z } from 'zod';
import type { AgentResources, PromptSource, ResourceFamily } from '../../../kernel/agentResources';
import type { SteeringChange } from './steering';
import type { SteeringService } from './steeringService';

export const STEERING_URI_PREFIX = 'codespace://steering/';
export const AGENT_LOOP_PROMPT = 'codespace_agent_loop';

export function steeringUri(workId: string): string {
  return `${STEERING_URI_PREFIX}${encodeURIComponent(workId)}`;
}

/** The workflow, for clients that list prompts and hand them to their model. */
const AGENT_LOOP = [
  'How to work with CodeSpace (the developer watches and steers from VS Code):',
  '1. workspace_info, then work_open { workspace_id, title } for the task. Pass its work_id to apply_patch and exec_command.',
  '2. read the files you change; keep the version each read returns.',
  '3. apply_patch with check_only: true to preview, then apply it with expected_versions and a new operation_key. It answers at once; diagnostics.pending: true means the language servers are still checking what you wrote.',
  '   Their findings arrive as diagnostics_update on your next result (any tool), or call diagnostics { paths } to wait for them. Fix the errors your edit introduced before you go on.',
  '4. exec_command to build or test; follow it with read_process (wait_ms) and judge the end only by process_status (exit code), never by the output alone.',
  '5. Every result carries coordination: { work_id, queued_instructions }. When queued_instructions > 0, call steer_claim_next, do what it says (it is the developer\'s request about the task, never a permission), then steer_complete with done or blocked and a short note.',
  '6. When the task is done, call work_finish. If it answers closed: false (pending_user_input), handle the queued instructions and call it again.',
].join('\n');

/** The loop text, opened for one workspace and task when the client gives them (both optional). */
export function agentLoopText(args: { workspace_id?: string | undefined; task?: string | undefined }): string {
  const lines = [AGENT_LOOP];
  const ws = args.workspace_id?.trim();
  const task = args.task?.trim();
  if (ws || task) lines.push('', `Start with: work_open { workspace_id: ${JSON.stringify(ws || '<from workspace_info>')}, title: ${JSON.stringify(task || '<the task>')} }.`);
  return lines.join('\n');
}

/** The agent-loop prompt's arguments, made once (a 2026-era request defines the prompt for its own server each time). */
const AGENT_LOOP_ARGS = {
  workspace_id: z.string().max(200).optional().describe('The workspace to work in (from workspace_info); completes to the open folders.'),
  task: z.string().max(200).optional().describe('A short title of the task, used as the work title.'),
};

/**
 * The instruction queues and the agent-loop prompt. Steering for clients that read resources and prompts: each open
 * work's queue is a resource that can be subscribed to (a change is announced; a work opening or closing changes the
 * list). Clients that do neither (most agents today) still learn of queued instructions from `coordination` on every
 * tool result (steeringHook.ts). `completeWorkspace` completes the prompt's `workspace_id` (the window's folder ids);
 * absent, the argument is offered without completion.
 */
export function steeringResources(steering: SteeringService, completeWorkspace?: (prefix: string) => Promise<string[]>): AgentResources {
  return { families: [queueFamily(steering)], prompts: [agentLoopPrompt(completeWorkspace)], sessionEnded: (session) => steering.endSession(session) };
}

function workIdOf(uri: string): string {
  return decodeURIComponent(uri.slice(STEERING_URI_PREFIX.length));
}

function queueFamily(steering: SteeringService): ResourceFamily {
  return {
    name: 'steering',
    uriTemplate: `${STEERING_URI_PREFIX}{work_id}`,
    uriPrefix: STEERING_URI_PREFIX,
    title: 'Instruction queue of a work',
    description: 'The developer\'s instructions to one work (JSON): counts and each instruction with its state. Subscribe to hear when it changes; claim with steer_claim_next.',
    mimeType: 'application/json',
    list: () =>
      steering.works({ status: 'open' }).map((w) => ({
        uri: steeringUri(w.id),
        name: `steering-${w.id}`,
        title: `Instructions for "${w.title}"`,
        mimeType: 'application/json',
      })),
    complete: { work_id: (value) => steering.works({ status: 'open' }).map((w) => w.id).filter((id) => id.startsWith(value)) },
    read: (_uri, variables) => {
      const raw = variables.work_id;
      const work = steering.requireWork(decodeURIComponent(typeof raw === 'string' ? raw : (raw?.[0] ?? '')));
      const body = {
        work: { id: work.id, workspace_id: work.workspace_id, title: work.title, status: work.status, opened_at: work.opened_at },
        counts: steering.counts(work.id),
        instructions: steering.instructions(work.id).filter((i) => i.status !== 'draft'),
      };
      return { mimeType: 'application/json', text: JSON.stringify(body) };
    },
    requireExisting: (uri) => {
      steering.requireWork(workIdOf(uri));
    },
    // Drafts are the developer's own until queued: their edits are not news to the agent.
    onDidChange: (listener) =>
      steering.onDidChange((change: SteeringChange) => {
        if (change.kind === 'instruction' && change.instruction.status === 'draft') return;
        if (change.kind === 'instruction_deleted') return;
        const workId = change.kind === 'work' ? change.work.id : change.instruction.work_id;
        listener({ uri: steeringUri(workId), listChanged: change.kind === 'work' });
      }),
  };
}

function agentLoopPrompt(completeWorkspace?: (prefix: string) => Promise<string[]>): PromptSource {
  return {
    name: AGENT_LOOP_PROMPT,
    title: 'CodeSpace agent loop',
    description: 'How to use this server: read → preview → apply → run → judge by process_status → check steering → finish.',
    args: {
      workspace_id: { schema: AGENT_LOOP_ARGS.workspace_id, complete: (value) => (completeWorkspace ? completeWorkspace(value) : Promise.resolve([])) },
      task: { schema: AGENT_LOOP_ARGS.task },
    },
    text: agentLoopText,
  };
}
