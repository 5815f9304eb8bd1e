/**
 * @module The inbox's in-process lock (`RunGate`): messages run side by side, except one being redelivered, which
 * runs alone, so a message that crashes the process takes no innocent message's attempt with it.
 */
/**
 * Shared runs and exclusive runs within one process (a first-in, first-out readers–writer lock). The inbox runs
 * a message that is being redelivered exclusively: if it is the one that crashed the process, nothing else is in
 * flight when it crashes again, so only its own attempt counter rises and innocent messages are never parked.
 */
export class RunGate {
  #shared = 0;
  #exclusive = false;
  readonly #queue: { readonly exclusive: boolean; readonly admit: () => void }[] = [];

  async run<T>(exclusive: boolean, work: () => Promise<T>): Promise<T> {
    // Newcomers queue behind waiters, so a waiting exclusive run is never overtaken by later shared ones.
    if (this.#queue.length === 0 && this.#canEnter(exclusive)) this.#enter(exclusive);
    else await new Promise<void>((admit) => this.#queue.push({ exclusive, admit }));
    try {
      return await work();
    } finally {
      if (exclusive) this.#exclusive = false;
      else this.#shared--;
      this.#drain();
    }
  }

  #canEnter(exclusive: boolean): boolean {
    return exclusive ? !this.#exclusive && this.#shared === 0 : !this.#exclusive;
  }

  #enter(exclusive: boolean): void {
    if (exclusive) this.#exclusive = true;
    else this.#shared++;
  }

  // Whenever the head cannot enter, some run is in progress, and its end drains again: nobody waits forever.
  #drain(): void {
    for (
      let head = this.#queue[0];
      head !== undefined && this.#canEnter(head.exclusive);
      head = this.#queue[0]
    ) {
      this.#queue.shift();
      this.#enter(head.exclusive);
      head.admit();
    }
  }
}
