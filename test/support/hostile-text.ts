/** Text that would do harm if it were taken for SQL, a template or markup. */
export const SQL = "Robert'); DROP TABLE users;-- OR '1'='1";
export const TEMPLATE = '{{7*7}} ${7*7} <%= 7*7 %> <script>alert(1)</script>';
/** Text beyond the basic multilingual plane, which needs four bytes in UTF-8. */
export const EMOJI = '🦄🚀 𝓤𝓷𝓲𝓬𝓸𝓭𝓮';
