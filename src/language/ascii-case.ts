/**
 * Case folding for names, actions and symbols. Only ASCII letters fold: full Unicode folding
 * would turn look-alikes into real names (the Kelvin sign 'K' lower-cases to 'k', 'ſ'
 * upper-cases to 'S'), so an unknown name could pass for a known one.
 *
 * Almost every name arrives already in the target case, so one scan of the character codes
 * answers the text itself without allocating; pure-ASCII text can use the built-in folding,
 * which on ASCII is exactly the ASCII folding.
 */
export function asciiLowerCase(text: string): string {
  return foldAscii(text, 0x41, 0x5a, false);
}

export function asciiUpperCase(text: string): string {
  return foldAscii(text, 0x61, 0x7a, true);
}

/** Mixed text: only the ASCII letters fold, whatever else it holds. */
const ASCII_UPPER_RUNS = /[A-Z]+/g;
const ASCII_LOWER_RUNS = /[a-z]+/g;

/** Folds the ASCII letters from `first` to `last` (char codes) to the other case. */
function foldAscii(text: string, first: number, last: number, toUpper: boolean): string {
  let folds = false;
  let ascii = true;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code >= first && code <= last) folds = true;
    else if (code > 0x7f) ascii = false;
  }
  if (!folds) return text;
  if (ascii) return toUpper ? text.toUpperCase() : text.toLowerCase();
  return toUpper
    ? text.replace(ASCII_LOWER_RUNS, (letters) => letters.toUpperCase())
    : text.replace(ASCII_UPPER_RUNS, (letters) => letters.toLowerCase());
}
