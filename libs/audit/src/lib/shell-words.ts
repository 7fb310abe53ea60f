/**
 * Splits a shell command line into simple commands (at `;`, `&`, `|`, `&&`,
 * `||`, newlines, parentheses and backticks) and each command into words,
 * honouring single quotes, double quotes, backslashes and comments. Enough of
 * POSIX sh to read an agent's commands; no expansion is performed.
 */
export function shellCommands(line: string): string[][] {
  const commands: string[][] = [];
  let words: string[] = [];
  let word = '';
  let inWord = false;
  const endWord = (): void => {
    if (inWord) words.push(word);
    word = '';
    inWord = false;
  };
  const endCommand = (): void => {
    endWord();
    if (words.length > 0) commands.push(words);
    words = [];
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === '\\') {
      if (line[i + 1] === '\n') {
        i++; // line continuation
      } else if (i + 1 < line.length) {
        word += line[++i];
        inWord = true;
      }
    } else if (c === "'") {
      const close = line.indexOf("'", i + 1);
      const end = close === -1 ? line.length : close;
      word += line.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (c === '"') {
      inWord = true;
      for (i++; i < line.length && line[i] !== '"'; i++) {
        if (line[i] === '\\' && i + 1 < line.length && '"\\$`\n'.includes(line[i + 1])) i++;
        word += line[i];
      }
    } else if (c === ' ' || c === '\t' || c === '\r') {
      endWord();
    } else if (c === '\n' || c === ';' || c === '&' || c === '|' || c === '(' || c === ')' || c === '`') {
      endCommand();
    } else if (c === '#' && !inWord) {
      const newline = line.indexOf('\n', i);
      i = newline === -1 ? line.length : newline - 1;
    } else {
      word += c;
      inWord = true;
    }
  }
  endCommand();
  return commands;
}
