/** A number of a JSON text that JSON.parse would change, where it is (a dotted path) and why. */
export interface InexactNumber {
  path: string;
  message: string;
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const STRING = /"(?:[^"\\]|\\.)*"/y;

/** Why JSON.parse would not give back the number `token` wrote, or null when it holds it as sent. */
function changeOf(token: string): string | null {
  const value = Number(token);
  if (!Number.isFinite(value)) {
    return 'is beyond the range of a JSON number (±1.8e308)';
  }
  if (Number.isInteger(value) && !Number.isSafeInteger(value)) {
    return 'is a whole number beyond ±9007199254740991, which JSON numbers cannot hold exactly';
  }
  if (value === 0 && /[1-9]/.test(token.split(/[eE]/)[0])) {
    return 'is too small for a JSON number to hold: it would be read as 0';
  }
  return null;
}

type Frame = { key: string | null } | { index: number };

/**
 * The first number of a JSON text that parsing would silently change (1e309 becomes Infinity, stored as null;
 * 9007199254740993 becomes …992; 1e-400 becomes 0), or null. One pass over the text, no recursion; a text that is
 * not JSON may give any answer, since JSON.parse refuses it anyway.
 */
export function inexactNumber(text: string): InexactNumber | null {
  const stack: Frame[] = [];
  const path = () => stack.map((frame) => ('index' in frame ? String(frame.index) : frame.key)).join('.');
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    const top = stack[stack.length - 1];
    if (char === '"') {
      STRING.lastIndex = i;
      const match = STRING.exec(text);
      if (!match) {
        return null;
      }
      if (top && 'key' in top && top.key === null) {
        top.key = parseKey(match[0]);
      }
      i += match[0].length - 1;
    } else if (char === '{') {
      stack.push({ key: null });
    } else if (char === '[') {
      stack.push({ index: 0 });
    } else if (char === '}' || char === ']') {
      stack.pop();
    } else if (char === ',') {
      if (top && 'index' in top) {
        top.index++;
      } else if (top) {
        top.key = null;
      }
    } else if (char === '-' || (char >= '0' && char <= '9')) {
      NUMBER.lastIndex = i;
      const token = NUMBER.exec(text)?.[0];
      if (!token) {
        return null;
      }
      const change = changeOf(token);
      if (change !== null) {
        const at = path();
        return { path: at, message: `${at || 'The body'} ${change}.` };
      }
      i += token.length - 1;
    }
  }
  return null;
}

function parseKey(literal: string): string {
  try {
    return JSON.parse(literal) as string;
  } catch {
    return literal.slice(1, -1);
  }
}
