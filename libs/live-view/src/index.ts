export { LiveViewTickets } from './lib/live-view-tickets';
export type { IssuedTicket, LiveViewTicketsOptions } from './lib/live-view-tickets';
export { StageSessionDirectory } from './lib/stage-session-directory';
export { LiveViewModule } from './lib/live-view.module';
export { isRevokedBy, isTicketShaped, newTicket, ticketDigest, ticketOpens, ticketRecord } from './lib/ticket-rules';
export type { TicketBinding, TicketRevocation } from './lib/ticket-rules';
