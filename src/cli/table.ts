/** Plain-text tables for the terminal: left-aligned names, right-aligned numbers. */
export function renderTable(headers: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  const cells = [headers.map(String), ...rows.map((row) => row.map(String))];
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => (row[column] ?? "").length)));
  const numeric = headers.map((_, column) => rows.length > 0 && rows.every((row) => typeof row[column] === "number"));
  const line = (row: readonly string[]) =>
    row
      .map((cell, column) => (numeric[column] === true ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(cells[0] ?? []), ...cells.slice(1).map(line)].join("\n");
}
