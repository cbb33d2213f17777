/** The rows of a raw `UPDATE … RETURNING`: the postgres driver answers [rows, count], the embedded one the rows. */
export function returnedRows(result: unknown[]): unknown[] {
  return Array.isArray(result[0]) ? (result[0] as unknown[]) : result;
}
