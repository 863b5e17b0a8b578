import { describe, expect, it } from '@jest/globals';
import { loggablePath } from './request-log.js';

describe('loggablePath', () => {
  it('should hide the token of a mailed link when the path carries one', () => {
    expect(loggablePath('/verify-email/AbC-123_x')).toBe('/verify-email/[redacted]');
    expect(loggablePath('/reset-password/AbC-123_x')).toBe('/reset-password/[redacted]');
    expect(loggablePath('/Reset-Password/AbC/extra')).toBe('/Reset-Password/[redacted]/extra');
    expect(loggablePath('/settings/profile/email/AbC-123_x')).toBe(
      '/settings/profile/email/[redacted]',
    );
  });

  it('should leave every other path as it is', () => {
    for (const path of [
      '/verify-email/resend',
      '/reset-password',
      '/login',
      '/teams/12',
      '/settings/profile',
    ]) {
      expect(loggablePath(path)).toBe(path);
    }
  });
});
