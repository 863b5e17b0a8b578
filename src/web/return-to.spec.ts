import { describe, expect, it } from '@jest/globals';
import { isReturnPage, signInPageFor } from './return-to.js';

describe('isReturnPage', () => {
  it("should take this site's pages, and neither other sites, the sign-in pages nor what is no page", () => {
    const taken = ['/teams/4', '/settings/api-tokens?x=1', '/api-docs', '/apis'];
    const refused = [
      '//evil.example/',
      '/\\evil.example',
      'https://evil.example/',
      '/login?return_to=/x',
      '/logout',
      '/api/v1/user/profile',
      '/API/v1/team',
      '/LOGIN',
      '/settings/security-log/export',
      '/settings/security-log/export/',
      '/api',
      '/metrics',
      '/metrics?x',
      '/a b',
      7,
    ];
    expect(taken.filter(isReturnPage)).toEqual(taken);
    expect(refused.filter(isReturnPage)).toEqual([]);
  });
});

describe('signInPageFor', () => {
  it('should come back to the page of a download, not to the file alone', () => {
    expect(signInPageFor('/settings/security-log/export')).toBe(
      '/login?return_to=%2Fsettings%2Fsecurity-log',
    );
    expect(signInPageFor('/teams/4/audit-log/export?kind=tokens')).toBe(
      '/login?return_to=%2Fteams%2F4%2Faudit-log',
    );
    expect(signInPageFor('/settings/security-log/export/')).toBe(
      '/login?return_to=%2Fsettings%2Fsecurity-log',
    );
    expect(signInPageFor('/teams/4')).toBe('/login?return_to=%2Fteams%2F4');
    expect(signInPageFor('/dashboard')).toBe('/login');
    expect(signInPageFor('/api/v1/token')).toBe('/login');
  });

  it('should say that the session ended, beside the page to come back to or alone', () => {
    expect(signInPageFor('/teams/4?tab=members', true)).toBe(
      '/login?return_to=%2Fteams%2F4%3Ftab%3Dmembers&session_ended=1',
    );
    expect(signInPageFor('/dashboard', true)).toBe('/login?session_ended=1');
    expect(signInPageFor('//evil.example/', true)).toBe('/login?session_ended=1');
  });
});
