import type { BackendOrigin, ProcessBackend } from './processBackend';
import type { ProcessCapabilities } from './processTypes';
import type { ProcessSupervisorOptions } from './supervisorSettings';

function probe(factory: () => ProcessBackend): boolean {
  try {
    return factory().available();
  } catch {
    return false;
  }
}

/**
 * What workspace_info reports of the processes, read from the backends the supervisor spawns with (so it matches
 * what it enforces); nothing is available once it is shutting down.
 */
export function capabilitiesOf(options: Pick<ProcessSupervisorOptions, 'backends' | 'lifetime'>, shuttingDown: boolean): ProcessCapabilities {
  const pty = probe(options.backends.tty);
  const pipes = probe(options.backends.pipes);
  let ptyOrigin: BackendOrigin | undefined;
  try {
    ptyOrigin = options.backends.tty().origin?.();
  } catch {
    ptyOrigin = undefined;
  }
  const lifetime = (typeof options.lifetime === 'function' ? options.lifetime() : options.lifetime) ?? 'vscode-window';
  return { available: !shuttingDown && (pty || pipes), pty, resize: pty, lifetime, ...(ptyOrigin ? { ptyOrigin } : {}) };
}
