/**
 * Reference for the glob dialect: VS Code's own glob-to-regex conversion (`parseRegExp` and `splitGlobAware` of
 * src/vs/base/common/glob.ts in microsoft/vscode, MIT licence), transcribed unchanged in behaviour. Tests compare
 * `compileGlob` with it on patterns and paths small enough for its backtracking regex.
 */

const GLOBSTAR = '**';
const GLOB_SPLIT = '/';
const PATH_REGEX = '[/\\\\]';
const NO_PATH_REGEX = '[^/\\\\]';

function escapeRegExpCharacters(value: string): string {
  return value.replace(/[\\{}*+?|^$.[\]()]/g, '\\$&');
}

function starsToRegExp(starCount: number, isLastPattern?: boolean): string {
  switch (starCount) {
    case 0:
      return '';
    case 1:
      return `${NO_PATH_REGEX}*?`;
    default:
      return `(?:${PATH_REGEX}|${NO_PATH_REGEX}+${PATH_REGEX}${isLastPattern ? `|${PATH_REGEX}${NO_PATH_REGEX}+` : ''})*?`;
  }
}

export function splitGlobAware(pattern: string, splitChar: string): string[] {
  if (!pattern) return [];
  const segments: string[] = [];
  let inBraces = false;
  let inBrackets = false;
  let curVal = '';
  for (const char of pattern) {
    switch (char) {
      case splitChar:
        if (!inBraces && !inBrackets) {
          segments.push(curVal);
          curVal = '';
          continue;
        }
        break;
      case '{':
        inBraces = true;
        break;
      case '}':
        inBraces = false;
        break;
      case '[':
        inBrackets = true;
        break;
      case ']':
        inBrackets = false;
        break;
    }
    curVal += char;
  }
  if (curVal) segments.push(curVal);
  return segments;
}

function parseRegExp(pattern: string): string {
  if (!pattern) return '';
  let regEx = '';
  const segments = splitGlobAware(pattern, GLOB_SPLIT);
  if (segments.every((segment) => segment === GLOBSTAR)) {
    regEx = '.*';
  } else {
    let previousSegmentWasGlobStar = false;
    segments.forEach((segment, index) => {
      if (segment === GLOBSTAR) {
        if (previousSegmentWasGlobStar) return;
        regEx += starsToRegExp(2, index === segments.length - 1);
      } else {
        let inBraces = false;
        let braceVal = '';
        let inBrackets = false;
        let bracketVal = '';
        for (const char of segment) {
          if (char !== '}' && inBraces) {
            braceVal += char;
            continue;
          }
          if (inBrackets && (char !== ']' || !bracketVal)) {
            let res: string;
            if (char === '-') res = char;
            else if ((char === '^' || char === '!') && !bracketVal) res = '^';
            else if (char === GLOB_SPLIT) res = '';
            else res = escapeRegExpCharacters(char);
            bracketVal += res;
            continue;
          }
          switch (char) {
            case '{':
              inBraces = true;
              continue;
            case '[':
              inBrackets = true;
              continue;
            case '}': {
              const choices = splitGlobAware(braceVal, ',');
              regEx += `(?:${choices.map((choice) => parseRegExp(choice)).join('|')})`;
              inBraces = false;
              braceVal = '';
              break;
            }
            case ']':
              regEx += '[' + bracketVal + ']';
              inBrackets = false;
              bracketVal = '';
              break;
            case '?':
              regEx += NO_PATH_REGEX;
              continue;
            case '*':
              regEx += starsToRegExp(1);
              continue;
            default:
              regEx += escapeRegExpCharacters(char);
          }
        }
        if (index < segments.length - 1 && (segments[index + 1] !== GLOBSTAR || index + 2 < segments.length)) {
          regEx += PATH_REGEX;
        }
      }
      previousSegmentWasGlobStar = segment === GLOBSTAR;
    });
  }
  return regEx;
}

/** VS Code's matcher for one pattern (its `toRegExp`, after the same trim): a path matches or not. */
export function vscodeGlobMatch(pattern: string, path: string): boolean {
  let regExp: RegExp;
  try {
    regExp = new RegExp(`^${parseRegExp(pattern.trim())}$`);
  } catch {
    return false;
  }
  return regExp.test(path);
}
