import type { Actor } from '../common/actor.js';
import type { User as TesseraUser } from '../users/user.entity.js';

declare global {
  namespace Express {
    interface Request {
      /** The user signed in through the browser session, when there is one. */
      currentUser?: TesseraUser;
      /** The page whose form posted this request, to send the person back to on bad input. */
      formPage?: string;
      /** The fields of that form, the only ones a refused form keeps to show again. */
      formFields?: readonly string[];
      /** Who acts in this request, once `actorOf` has built it. */
      actor?: Actor;
    }
  }
}
