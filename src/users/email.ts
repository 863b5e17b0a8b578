/** Emails are compared case-insensitively: they are stored and looked up in this form. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
