import { describe, expect, it } from '@jest/globals';
import { ValidationError, type DomainError } from '../../common/errors/domain.error.js';
import {
  InvitationLinkError,
  InvitationNotFoundError,
  AlreadyInvitedError,
} from '../../invitations/invitations.errors.js';
import {
  AlreadyMemberError,
  NotTeamManagerError,
  OwnerCannotLeaveError,
  OwnerRoleError,
  PersonalTeamError,
} from '../../teams/teams.errors.js';
import { API_ERRORS, apiErrorAnswers, type ApiErrorCode } from './api-errors.js';
import {
  InvalidJsonError,
  PayloadTooLargeError,
  UnsupportedMediaTypeError,
} from './conventions/json-body.js';
import {
  IdempotencyKeyInUseError,
  IdempotencyKeyReusedError,
} from './idempotency/idempotency.interceptor.js';

/** An error the team API can meet for each code of the table: what the services throw. */
const THROWN: Record<ApiErrorCode, DomainError> = {
  bad_request: new InvalidJsonError(),
  forbidden: new NotTeamManagerError(),
  not_found: new InvitationNotFoundError(),
  already_member: new AlreadyMemberError(),
  already_invited: new AlreadyInvitedError(),
  personal_team: new PersonalTeamError(),
  owner_role: new OwnerRoleError(),
  owner_cannot_leave: new OwnerCannotLeaveError(),
  idempotency_key_in_use: new IdempotencyKeyInUseError(),
  link_used: new InvitationLinkError('used'),
  payload_too_large: new PayloadTooLargeError(),
  unsupported_media_type: new UnsupportedMediaTypeError(),
  validation_failed: new ValidationError({ email: 'Enter a valid email address.' }),
  idempotency_key_reused: new IdempotencyKeyReusedError(),
};

describe("the API's table of error codes", () => {
  it.each(Object.entries(THROWN))(
    'should give %s the status the API answers the error that says it with',
    (code, error) => {
      expect({ code: error.code, status: apiErrorAnswers.statusOf(error) }).toEqual({
        code,
        status: API_ERRORS[code as ApiErrorCode].status,
      });
    },
  );
});
