import { describe, expect, it } from '@jest/globals';
import { describeClient } from './client-description.js';

describe('describeClient', () => {
  it.each([
    [
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
      'Chrome 131 on Linux',
    ],
    [
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Mobile/15E148 Safari/604.1',
      'Mobile Safari 17 on iOS 17.1',
    ],
    ['curl/8.5.0', 'curl 8.5.0'],
    ['python-requests/2.31.0', 'python-requests 2.31.0'],
    ['Go-http-client/1.1', 'Go-http-client 1.1'],
  ])('should name the browser or tool when the user agent is %s', (ua, expected) => {
    expect(describeClient(ua)).toBe(expected);
  });

  it('should fall back to the first word, cut short, when the parser does not know the client', () => {
    expect(describeClient('GitHub-Actions runner')).toBe('GitHub-Actions');
    expect(describeClient(`${'x'.repeat(300)}/1.0`)).toBe('x'.repeat(60));
  });

  it('should say so when no user agent was sent', () => {
    expect(describeClient(null)).toBe('no User-Agent sent');
    expect(describeClient('')).toBe('no User-Agent sent');
  });
});
