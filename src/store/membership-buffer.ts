// Membership rows (session → student, …) that a transaction has yet to insert, one double each. A pull writes a
// resource in chunks, and each chunk's rows span every member: inserted chunk by chunk, they land all over the
// primary-key index (member first) again and again. Kept until the transaction ends, they go in once, in key
// order, so the index only grows at its end (bench:sync prints what a district's full sync takes on each store).
//
// A pair is member × 2^32 + owner: exact in a double while the member id is below 2^21 and the owner id below
// 2^32 (ids are whole and non-negative), sortable by the engine's own typed-array sort, and 8 bytes a row, where
// a [owner, member] array is about five times that.

const OWNER_SPAN = 2 ** 32;
const MEMBER_LIMIT = 2 ** 21;
/** Pairs per block: the buffer grows a block at a time, never copying what it holds. */
const BLOCK = 65_536;

export type Pair = [owner: number, member: number];

export class MembershipBuffer {
  #blocks: Float64Array[] = [];
  #used = BLOCK;
  #size = 0;

  /** Whether a pair can wait here; one that cannot is inserted at once. */
  static fits(owner: number, member: number): boolean {
    return (
      Number.isInteger(owner) &&
      Number.isInteger(member) &&
      owner >= 0 &&
      member >= 0 &&
      owner < OWNER_SPAN &&
      member < MEMBER_LIMIT
    );
  }

  get size(): number {
    return this.#size;
  }

  /** Keeps a pair that fits (see fits). */
  add(owner: number, member: number): void {
    if (this.#used === BLOCK) {
      this.#blocks.push(new Float64Array(BLOCK));
      this.#used = 0;
    }
    this.#blocks[this.#blocks.length - 1]![this.#used++] = member * OWNER_SPAN + owner;
    this.#size++;
  }

  /**
   * Every pair kept, as its key (member × 2^32 + owner: see memberOf, ownerOf), in (member, owner) order; the
   * buffer is empty afterwards. The blocks are let go of as they are copied into the one array that is sorted.
   */
  drainSorted(): Float64Array {
    const all = new Float64Array(this.#size);
    let at = 0;
    for (const block of this.#blocks.splice(0)) {
      const n = Math.min(BLOCK, this.#size - at);
      all.set(n === BLOCK ? block : block.subarray(0, n), at);
      at += n;
    }
    this.#used = BLOCK;
    this.#size = 0;
    return all.sort();
  }

  /** Every pair kept, one at a time, in (member, owner) order (as drainSorted gives their keys). */
  *drainEach(): Generator<Pair> {
    for (const key of this.drainSorted()) yield [ownerOf(key), memberOf(key)];
  }
}

/** The member id of a key from drainSorted. */
export function memberOf(key: number): number {
  return Math.floor(key / OWNER_SPAN);
}

/** The owner id of a key from drainSorted. */
export function ownerOf(key: number): number {
  return key % OWNER_SPAN;
}
