/** Error text for logs and events: never throws, whatever was thrown. */
export const errorText = (error: unknown): string => {
  if (error instanceof Error) return error.message;
  try {
    return typeof error === "string" ? error : (JSON.stringify(error) ?? String(error));
  } catch {
    return String(error);
  }
};
