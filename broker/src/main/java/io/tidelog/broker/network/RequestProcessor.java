package io.tidelog.broker.network;

import io.vertx.core.Future;
import java.nio.ByteBuffer;
import java.util.Optional;
import org.apache.kafka.common.network.Send;

/**
 * Turns one connection's request frames into responses; the protocol layer implements it, and keeps
 * what the connection has established (its principal, once authenticated) in it.
 */
public interface RequestProcessor {
  /**
   * Called on the connection's event loop, in the order the frames arrived; the returned future
   * must complete on that event loop.
   *
   * @param frame the request, without its size prefix
   * @return the response to write, or empty when the request gets none ({@code acks=0}); a failed
   *     future closes the connection
   */
  Future<Optional<Send>> process(ByteBuffer frame);

  /**
   * The largest request frame the connection takes now, within {@code socket.request.max.bytes};
   * less before the client is authenticated ({@code sasl.server.max.receive.size}).
   */
  default int requestMaxBytes() {
    return Integer.MAX_VALUE;
  }

  /**
   * How long to stop reading from the connection once the responses so far are written, as Kafka
   * mutes a throttled client's channel (KIP-219); taking it clears it.
   */
  default long takeMuteMs() {
    return 0;
  }

  /**
   * Whether the connection reads its next request only once the last one is answered, as Kafka
   * serves every connection: for a client under a rate quota, so that the throttle of one response
   * holds back the requests it pipelines behind it rather than only those after them.
   */
  default boolean oneRequestAtATime() {
    return false;
  }

  /**
   * Whether the connection closes once the responses so far are written, as after a failed
   * authentication.
   */
  default boolean closeAfterResponses() {
    return false;
  }

  /** Opens the processor of each new connection. */
  @FunctionalInterface
  interface Factory {
    RequestProcessor open(ClientChannel channel);
  }

  /** Told once when the connection closed, for either side's reason. */
  default void closed() {}
}
