/**
 * The last revision written per event key, so an update in place needs no
 * read first. Bounded (least recently used goes first); a stale or missing
 * entry only costs a conflict and a re-read, never a lost event.
 */
export class RevCache {
  private readonly revs = new Map<string, string>();
  constructor(private readonly maxEntries: number) {}

  get(key: string): string | undefined {
    const rev = this.revs.get(key);
    if (rev !== undefined) {
      this.revs.delete(key);
      this.revs.set(key, rev);
    }
    return rev;
  }

  set(key: string, rev: string): void {
    this.revs.delete(key);
    this.revs.set(key, rev);
    while (this.revs.size > this.maxEntries) {
      const oldest = this.revs.keys().next();
      if (oldest.done === true) break;
      this.revs.delete(oldest.value);
    }
  }

  forget(key: string): void {
    this.revs.delete(key);
  }

  clear(): void {
    this.revs.clear();
  }
}
