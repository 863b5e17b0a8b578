import { describe, expect, it } from '@jest/globals';
import { checkedTogether, NotFoundError, ValidationError } from './domain.error.js';

describe('checkedTogether', () => {
  it('should answer every check in order when none refuses', async () => {
    await expect(
      checkedTogether(
        () => 1,
        async () => 'two',
      ),
    ).resolves.toEqual([1, 'two']);
  });

  it('should tell the fields of every refused check at once, thrown or rejected', async () => {
    const refused = checkedTogether(
      () => {
        throw new ValidationError({ events: 'Choose at least one event.' });
      },
      () => 'kept',
      async () => Promise.reject(new ValidationError({ url: 'The URL is not a URL.' })),
    );
    await expect(refused).rejects.toBeInstanceOf(ValidationError);
    await expect(refused).rejects.toMatchObject({
      fields: { events: 'Choose at least one event.', url: 'The URL is not a URL.' },
    });
  });

  it('should throw any other error as it is, not as a field', async () => {
    const missing = new NotFoundError('team');
    await expect(
      checkedTogether(
        () => {
          throw new ValidationError({ url: 'The URL is not a URL.' });
        },
        () => {
          throw missing;
        },
      ),
    ).rejects.toBe(missing);
  });
});
