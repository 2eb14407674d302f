/**
 * Echoes what a sender wrote inside an error detail: single-quoted, control and invisible
 * characters escaped (a detail must stay one readable line), and cut short so a 16 KiB
 * garbage token does not become a 16 KiB detail.
 */
export const EXCERPT_MAX_CHARACTERS = 40;

export function quotedExcerpt(text: string): string {
  return `'${shortened(text)}'`;
}

/** The written text, escaped and shortened, without quotes (for `param`). */
export function shortened(text: string): string {
  const characters = [...text];
  const kept = characters.length > EXCERPT_MAX_CHARACTERS ? characters.slice(0, EXCERPT_MAX_CHARACTERS) : characters;
  const escaped = kept.map(escapeInvisible).join('');
  return characters.length > EXCERPT_MAX_CHARACTERS ? `${escaped}…` : escaped;
}

function escapeInvisible(character: string): string {
  if (/^[\p{Cc}\p{Cs}\p{Cf}\p{Zl}\p{Zp}]$/u.test(character)) {
    return `\\u${character.codePointAt(0)!.toString(16).padStart(4, '0')}`;
  }
  return character;
}
