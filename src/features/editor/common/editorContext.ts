import { z } from 'zod';
import { LANGUAGE_LIMITS, LocationMapper, boundedText, featuresOf, rangeSchema } from './language';
import { defineTool } from '../../../kernel/tool';
import type { EditorToolDeps } from './editorTools';

const fileRef = z.object({
  outside: z.boolean().describe('true: a file outside every workspace folder (or not a file); no path or content is given.'),
  workspace_id: z.string().optional(),
  path: z.string().optional(),
});

export const editorContextTool = defineTool({
  name: 'editor_context',
  title: 'What the developer is looking at',
  description:
    'What the developer is looking at: the active file with its selections and selected text, the visible editors, ' +
    'and unsaved files. Use it when they point at code (\'this function\').',
  kind: 'inspect',
  input: {},
  output: {
    active: fileRef
      .extend({
        selections: z.array(rangeSchema).optional(),
        selected_text: z.string().optional(),
        selection_truncated: z.boolean().optional(),
      })
      .optional(),
    visible: z.array(fileRef.extend({ selections: z.array(rangeSchema).optional() })),
    dirty: z.array(fileRef),
  },
  create: (deps: Pick<EditorToolDeps, 'language' | 'workspaces' | 'fs'>) => async () => {
    const features = featuresOf(deps);
    const state = features.editorState();
    const mapper = new LocationMapper(deps);
    const ref = async (abs: string | undefined): Promise<z.infer<typeof fileRef>> => {
      const where = await mapper.confinePath(abs);
      return where ? { outside: false, workspace_id: where.ws.id, path: where.rel } : { outside: true };
    };
    let active: z.input<typeof fileRef> & { selections?: z.infer<typeof rangeSchema>[]; selected_text?: string; selection_truncated?: boolean } | undefined;
    if (state.active) {
      const r = await ref(state.active.path);
      if (r.outside) active = r;
      else {
        const { text, truncated } = boundedText(state.active.selectedText, LANGUAGE_LIMITS.maxSelectionChars);
        active = { ...r, selections: state.active.selections.slice(0, 100).map((s) => s), selected_text: text, selection_truncated: truncated };
      }
    }
    const visible = [];
    for (const v of state.visible.slice(0, 50)) {
      const r = await ref(v.path);
      visible.push(r.outside ? r : { ...r, selections: v.selections.slice(0, 100) });
    }
    const dirty = [];
    for (const d of state.dirty.slice(0, 200)) dirty.push(await ref(d));
    return { ...(active ? { active } : {}), visible, dirty };
  },
});
