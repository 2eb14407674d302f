/**
 * Tokens the tests start servers with. The service refuses a weak admin or metrics token, so
 * these are random-looking (made with `openssl rand -base64 32`), one shared constant each.
 */
export const TEST_ADMIN_TOKEN = 'u0dV3Xc8PZ8QmYw1x4Hn6T2kR9bJfLqA7sEoGiNpC5E=';
export const TEST_METRICS_TOKEN = 'Mt7pK2wQ9xZ4vB1nR8cL3jF6hD0sY5gA2eUoWiTqXkE=';
