/** Names joined for a sentence: "a", "a or b", "a, b or c" (or with "and"). */
export function nameList(names: readonly string[], conjunction: 'or' | 'and'): string {
  if (names.length <= 1) return names.join('');
  return `${names.slice(0, -1).join(', ')} ${conjunction} ${names[names.length - 1]}`;
}
