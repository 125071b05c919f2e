import { z } from 'zod';
import type { Disposable } from '../base/disposable';
import type { SteeringChange } from '../features/works';
import type { SteeringService } from '../features/works';
import type { ChangeSink, McpSurface } from './surface';

export const STEERING_URI_PREFIX = 'codespace://steering/';
export const AGENT_LOOP_PROMPT = 'codespace_agent_loop';
/** Most resources one session may subscribe to (each is one work's queue). */
const MAX_SUBSCRIPTIONS = 256;

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

/**
 * Steering for MCP clients that read resources and prompts: each open work's instruction queue as the resource
 * codespace://steering/{work_id} (subscribable: resources/subscribe on the 2025 era, subscriptions/listen on the
 * 2026 era; a change sends notifications/resources/updated), and the prompt codespace_agent_loop. Clients that do neither (most agents today)
 * still learn of queued instructions from `coordination` on every tool result (src/kernel/dispatch.ts).
 */
/** The loop text, opened for one workspace and task when the client gives them (both optional). */
export function agentLoopText(args: { workspace_id?: string | undefined; task?: string | undefined }): string {
  const lines = [AGENT_LOOP];
  const ws = args.workspace_id?.trim();
  const task = args.task?.trim();
  if (ws || task) lines.push('', `Start with: work_open { workspace_id: ${JSON.stringify(ws || '<from workspace_info>')}, title: ${JSON.stringify(task || '<the task>')} }.`);
  return lines.join('\n');
}

/**
 * `completeWorkspace` answers completion/complete for the prompt's `workspace_id` (the window's folder ids); absent,
 * the argument is offered without completion. Change notifications are wired apart (`watchSteering`), because on
 * the 2026 era they leave through the handler, not through the instance that serves one request.
 */
/** The agent-loop prompt's arguments, made once (a 2026-era request defines the prompt for its own server each time). */
const AGENT_LOOP_ARGS = {
  workspace_id: z.string().max(200).optional().describe('The workspace to work in (from workspace_info); completes to the open folders.'),
  task: z.string().max(200).optional().describe('A short title of the task, used as the work title.'),
};

export function registerSteeringResources(surface: McpSurface, steering: SteeringService, completeWorkspace?: (prefix: string) => Promise<string[]>): void {
  surface.resourceTemplate(
    'steering',
    {
      uriTemplate: `${STEERING_URI_PREFIX}{work_id}`,
      list: () => ({
        resources: steering.works({ status: 'open' }).map((w) => ({
          uri: steeringUri(w.id),
          name: `steering-${w.id}`,
          title: `Instructions for "${w.title}"`,
          mimeType: 'application/json',
        })),
      }),
      complete: { work_id: (value) => steering.works({ status: 'open' }).map((w) => w.id).filter((id) => id.startsWith(value)) },
    },
    {
      title: 'Instruction queue of a work',
      description: 'The developer\'s instructions to one work (JSON): counts and each instruction with its state. Subscribe to hear when it changes; claim with steer_claim_next.',
      mimeType: 'application/json',
    },
    (uri, variables) => {
      const raw = variables.work_id;
      const workId = decodeURIComponent(Array.isArray(raw) ? (raw[0] ?? '') : (raw ?? ''));
      const work = steering.requireWork(workId);
      const body = {
        work: { id: work.id, workspace_id: work.workspace_id, title: work.title, status: work.status, opened_at: work.opened_at },
        counts: steering.counts(work.id),
        instructions: steering.instructions(work.id).filter((i) => i.status !== 'draft'),
      };
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(body) }] };
    },
  );
  surface.registerCapabilities({ resources: { subscribe: true, listChanged: true } });

  surface.prompt(AGENT_LOOP_PROMPT, {
    title: 'CodeSpace agent loop',
    description: 'How to use this server: read → preview → apply → run → judge by process_status → check steering → finish.',
    args: {
      workspace_id: {
        schema: AGENT_LOOP_ARGS.workspace_id,
        complete: (value) => (completeWorkspace ? completeWorkspace(value) : Promise.resolve([])),
      },
      task: { schema: AGENT_LOOP_ARGS.task },
    },
    get: (args) => ({ messages: [{ role: 'user', content: { type: 'text', text: agentLoopText(args) } }] }),
  });
}

/**
 * The 2025 era's per-session subscriptions: resources/subscribe names one work's queue (it must exist), at most
 * MAX_SUBSCRIPTIONS of them; the returned filter tells `watchSteering` which updates this session hears.
 */
export function registerSteeringSubscriptions(surface: McpSurface, steering: SteeringService): (uri: string) => boolean {
  const subscribed = new Set<string>();
  surface.handle('resources/subscribe', (params) => {
    const uri = params.uri;
    if (!uri.startsWith(STEERING_URI_PREFIX)) throw Object.assign(new Error(`Only ${STEERING_URI_PREFIX}{work_id} resources can be subscribed to.`), { code: -32602 });
    steering.requireWork(decodeURIComponent(uri.slice(STEERING_URI_PREFIX.length)));
    if (!subscribed.has(uri) && subscribed.size >= MAX_SUBSCRIPTIONS) throw Object.assign(new Error(`At most ${MAX_SUBSCRIPTIONS} subscriptions per session.`), { code: -32602 });
    subscribed.add(uri);
    return {};
  });
  surface.handle('resources/unsubscribe', (params) => {
    subscribed.delete(params.uri);
    return {};
  });
  surface.onClose(() => subscribed.clear());
  return (uri) => subscribed.has(uri);
}

/**
 * Sends what changed in the steering queues to `sink`: resources/updated for a queue (when `wanted` lets it
 * through), resources/list_changed when a work opens or closes. Drafts are the developer's own until queued: their
 * edits are not news to the agent.
 */
export function watchSteering(steering: SteeringService, sink: ChangeSink, wanted: (uri: string) => boolean = () => true): Disposable {
  return steering.onDidChange((change: SteeringChange) => {
    const workId = change.kind === 'work' ? change.work.id : change.kind === 'instruction' ? change.instruction.work_id : change.work_id;
    if (change.kind === 'instruction' && change.instruction.status === 'draft') return;
    if (change.kind === 'instruction_deleted') return;
    const uri = steeringUri(workId);
    if (wanted(uri)) sink.resourceUpdated(uri);
    if (change.kind === 'work') sink.resourcesChanged();
  });
}
