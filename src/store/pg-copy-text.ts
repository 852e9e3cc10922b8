// Rows a caller has already written in COPY's text format, as the parameter of a COPY … FROM STDIN (pg-copy.ts):
// for rows written faster as text than as a value array each, such as membership rows (three numbers, by the ten
// thousand on a school's full pull; issue 46).
import { CopyRows } from './pg-copy.ts';

/** Text handed to the server per write, as CopyRows' own chunks: a large table never sits whole in memory. */
const CHUNK_CHARS = 256 * 1024;

/** `pieces`: each one or more whole rows in COPY's text format, each row ending in a newline. */
export class CopyText extends CopyRows<string> {
  readonly #pieces: Iterable<string>;
  constructor(pieces: Iterable<string>) {
    super([], () => []);
    this.#pieces = pieces;
  }

  override *chunks(): Generator<string> {
    let text = '';
    for (const piece of this.#pieces) {
      text += piece;
      if (text.length >= CHUNK_CHARS) {
        yield text;
        text = '';
      }
    }
    if (text !== '') yield text;
  }
}
