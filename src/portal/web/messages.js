// Every word the portal shows, per language (the tenant's locale chooses; a key missing in one falls back to English).
import de from './messages/de.js';
import en from './messages/en.js';
import es from './messages/es.js';
import fr from './messages/fr.js';

export const MESSAGES = { en, de, fr, es };
