// Serves what the modules offer agents beside their tools (src/kernel/agentResources.ts) on either revision's
// surface: each resource family as a template with its list, reader and completions, each prompt, the 2025
// revision's per-session subscriptions, and the change notifications.
import type { Disposable } from '../base/disposable';
import type { AgentResources } from '../kernel/agentResources';
import type { ChangeSink, McpSurface } from './surface';

/** Most resources one session may subscribe to. */
const MAX_SUBSCRIPTIONS = 256;
/** JSON-RPC's invalid-params code. */
const INVALID_PARAMS = -32602;

function invalidParams(message: string): Error & { code: number } {
  return Object.assign(new Error(message), { code: INVALID_PARAMS });
}

/** Registers the families as resource templates and the prompts; declares subscriptions when a family offers them. */
export function registerAgentResources(surface: McpSurface, resources: AgentResources): void {
  for (const family of resources.families) {
    surface.resourceTemplate(
      family.name,
      { uriTemplate: family.uriTemplate, list: () => ({ resources: family.list().map((r) => ({ ...r })) }), complete: family.complete },
      { title: family.title, description: family.description, ...(family.mimeType !== undefined ? { mimeType: family.mimeType } : {}) },
      (uri, variables) => {
        const content = family.read(uri.href, variables);
        return { contents: [{ uri: uri.href, mimeType: content.mimeType, text: content.text }] };
      },
    );
  }
  if (resources.families.some((f) => f.requireExisting)) surface.registerCapabilities({ resources: { subscribe: true, listChanged: true } });
  for (const prompt of resources.prompts) {
    surface.prompt(prompt.name, {
      title: prompt.title,
      description: prompt.description,
      args: prompt.args,
      get: (args) => ({ messages: [{ role: 'user', content: { type: 'text', text: prompt.text(args) } }] }),
    });
  }
}

/**
 * The 2025 era's per-session subscriptions: resources/subscribe names one existing resource of a family that
 * offers them, at most MAX_SUBSCRIPTIONS; the returned filter tells `watchAgentResources` which updates this
 * session hears.
 */
export function registerSubscriptions(surface: McpSurface, resources: AgentResources): (uri: string) => boolean {
  const subscribable = resources.families.filter((f) => f.requireExisting);
  const subscribed = new Set<string>();
  surface.handle('resources/subscribe', (params) => {
    const uri = params.uri;
    const family = subscribable.find((f) => uri.startsWith(f.uriPrefix));
    if (!family) throw invalidParams(`Only ${subscribable.map((f) => f.uriTemplate).join(' and ') || 'no'} resources can be subscribed to.`);
    family.requireExisting?.(uri);
    if (!subscribed.has(uri) && subscribed.size >= MAX_SUBSCRIPTIONS) throw invalidParams(`At most ${MAX_SUBSCRIPTIONS} subscriptions per session.`);
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

/** Sends what changed to `sink`: resources/updated (when `wanted` lets it through) and resources/list_changed. */
export function watchAgentResources(resources: AgentResources, sink: ChangeSink, wanted: (uri: string) => boolean = () => true): Disposable {
  const listening = resources.families.flatMap((family) =>
    family.onDidChange
      ? [
          family.onDidChange((change) => {
            if (wanted(change.uri)) sink.resourceUpdated(change.uri);
            if (change.listChanged) sink.resourcesChanged();
          }),
        ]
      : [],
  );
  return { dispose: () => listening.forEach((l) => l.dispose()) };
}
