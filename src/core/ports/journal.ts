/** The journal port lives in src/base (the JournalStore every durable store is built on needs it). */
export * from '../../base/journal';
