// @ts-check
/** The cells of one row of a Markdown table (`| a | b |` → ['a', 'b']), read by the checks that take their data from docs. */
function splitRow(line) {
  return line
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split('|')
    .map((cell) => cell.trim());
}

module.exports = { splitRow };
