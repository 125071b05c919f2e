import { read, section } from '../../../kernel/vscode/settings';
import { PACKAGE_REGISTRY_DOMAINS } from '../common/networkDomains';
import { DEFAULT_CLOSE_EXITED_AFTER_SECONDS, DEFAULT_MAX_LIVE_MIRRORS, terminalSlots } from './terminalSlots';

/** The settings of commands and their terminals, read fresh at each decision. */
export const processSettings = {
  /**
   * The allow-list for `codespace.exec.network` `domains`: `codespace.exec.allowedDomains`, plus the package
   * registries when `codespace.exec.allowPackageRegistries` is on. User settings only (a workspace cannot open the
   * network); entries are validated by the sandbox, which logs those it ignores.
   */
  execAllowedDomains(): string[] {
    const config = section();
    const listed = config.inspect<unknown>('exec.allowedDomains')?.globalValue;
    const own = Array.isArray(listed) ? listed.filter((d): d is string => typeof d === 'string') : [];
    return config.inspect<boolean>('exec.allowPackageRegistries')?.globalValue === true ? [...PACKAGE_REGISTRY_DOMAINS, ...own] : own;
  },
  /** Agent terminals open at once (see terminalSlots.ts); read at each decision. */
  terminalsMaxLiveMirrors(): number {
    return terminalSlots.validSlots(read<number>('terminals.maxLiveMirrors', DEFAULT_MAX_LIVE_MIRRORS));
  },
  /** Seconds after its process's exit at which an agent terminal closes by itself; 0: never. */
  terminalsCloseExitedAfterSeconds(): number {
    return terminalSlots.validCloseAfter(read<number>('terminals.closeExitedAfterSeconds', DEFAULT_CLOSE_EXITED_AFTER_SECONDS));
  },
};
