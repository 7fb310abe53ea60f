import { OnGatewayConnection, OnGatewayDisconnect, WebSocketGateway } from '@nestjs/websockets';
import type { WebSocket } from 'ws';
import { EventsService } from './events.service';
import { WS_PATH } from './events.options';

/** The run-event WebSocket. Access is checked at the upgrade (ApiWsAdapter); frames are handled by the session. */
@WebSocketGateway({ path: WS_PATH })
export class EventsGateway implements OnGatewayConnection, OnGatewayDisconnect {
  constructor(private readonly events: EventsService) {}

  handleConnection(client: WebSocket): void {
    this.events.open(client);
  }

  async handleDisconnect(client: WebSocket): Promise<void> {
    await this.events.close(client);
  }
}
