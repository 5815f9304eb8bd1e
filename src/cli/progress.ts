/**
 * @module A one-line progress bar on stderr. On a terminal it redraws in place at most every 100 ms; elsewhere (CI logs,
 * pipes) it stays quiet until `finish`, which prints one summary line.
 */
export class ProgressBar {
  readonly #total: number;
  readonly #label: string;
  readonly #tty = process.stderr.isTTY === true;
  #done = 0;
  #lastDraw = 0;

  constructor(label: string, total: number) {
    this.#label = label;
    this.#total = total;
  }

  tick(): void {
    this.#done++;
    const now = Date.now();
    if (this.#tty && (now - this.#lastDraw >= 100 || this.#done === this.#total)) {
      this.#lastDraw = now;
      this.#draw();
    }
  }

  finish(): void {
    if (this.#tty) {
      this.#draw();
      process.stderr.write('\n');
    } else {
      process.stderr.write(`${this.#label}: ${this.#done}/${this.#total}\n`);
    }
  }

  #draw(): void {
    const width = 30;
    const filled = Math.round((this.#done / this.#total) * width);
    const bar = `${'#'.repeat(filled)}${'.'.repeat(width - filled)}`;
    process.stderr.write(`\r${this.#label} [${bar}] ${this.#done}/${this.#total}`);
  }
}
