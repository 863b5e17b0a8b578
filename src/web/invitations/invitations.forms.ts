import { AddMemberDto } from '../../teams/dto/add-member.dto.js';

/** The team page's invitation form: an address (with or without an account) and a role. */
export class InviteForm extends AddMemberDto {}
