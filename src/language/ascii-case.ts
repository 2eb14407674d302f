/**
 * Case folding for names, actions and symbols. Only ASCII letters fold: full Unicode folding
 * would turn look-alikes into real names (the Kelvin sign 'K' lower-cases to 'k', 'ſ'
 * upper-cases to 'S'), so an unknown name could pass for a known one.
 */
export function asciiLowerCase(text: string): string {
  return text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

export function asciiUpperCase(text: string): string {
  return text.replace(/[a-z]+/g, (letters) => letters.toUpperCase());
}
