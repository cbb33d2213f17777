/** SentencePiece's word-start mark: a text starts with one and each space becomes one. */
const WORD_START = '\u2581';
/** The vocabulary's first 6 entries (unknown, <s>, </s>, three extra ids) never match text. */
const RESERVED = 6;
/** The id of an unknown character (a run of them is one id). */
const UNKNOWN = 0;
/** A character no piece starts with: one unknown, scoring 0. */
const UNKNOWN_PIECE = { id: UNKNOWN, score: 0 };

/**
 * The Universal Sentence Encoder lite's tokenizer: the segmentation into vocabulary pieces of highest
 * total log-probability (a piece without a score counts 0), a character no piece starts with being
 * unknown. It gives the ids @energetic-ai/embeddings' tokenizer gives, which the model's vectors
 * were checked against, including its tie-breaks: between segmentations of equal score the one whose
 * last piece starts later wins, and a best score of exactly 0 counts as none yet.
 */
export class PieceTokenizer {
  private readonly pieces = new Map<string, { id: number; score: number }>();
  private readonly longest: number;

  /** `vocabulary`: the model's vocab.json, [piece, log-probability] by id. */
  constructor(vocabulary: [string, number | null][]) {
    let longest = 1;
    for (let id = RESERVED; id < vocabulary.length; id++) {
      const [piece, score] = vocabulary[id];
      // A piece listed twice keeps its last id.
      this.pieces.set(piece, { id, score: score ?? 0 });
      longest = Math.max(longest, [...piece].length);
    }
    this.longest = longest;
  }

  encode(text: string): number[] {
    const normalized = text.normalize('NFKC');
    const chars = normalized ? [...(WORD_START + normalized.replaceAll(' ', WORD_START))] : [];
    const n = chars.length;
    // The lattice: the pieces ending at each position, by ascending start.
    const ending = Array.from({ length: n + 1 }, () => [] as { start: number; id: number; score: number }[]);
    for (let start = 0; start < n; start++) {
      let text = '';
      let found = false;
      for (let end = start + 1; end <= Math.min(n, start + this.longest); end++) {
        text += chars[end - 1];
        const piece = this.pieces.get(text);
        if (piece) {
          ending[end].push({ start, ...piece });
          found = true;
        }
      }
      if (!found) {
        ending[start + 1].push({ start, ...UNKNOWN_PIECE });
      }
    }
    // Best segmentation of the first `end` characters: its score, last piece's id and length.
    const best = new Float64Array(n + 1);
    const last = Array.from({ length: n + 1 }, () => ({ id: UNKNOWN, length: 0 }));
    for (let end = 1; end <= n; end++) {
      for (const { start, id, score } of ending[end]) {
        const total = best[start] + score;
        if (best[end] === 0 || total >= best[end]) {
          best[end] = total;
          last[end] = { id, length: end - start };
        }
      }
    }
    const ids: number[] = [];
    for (let end = n; end > 0; end -= last[end].length) {
      if (!(last[end].id === UNKNOWN && ids[ids.length - 1] === UNKNOWN)) {
        ids.push(last[end].id);
      }
    }
    return ids.reverse();
  }
}
