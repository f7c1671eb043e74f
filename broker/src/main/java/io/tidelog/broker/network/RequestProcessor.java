package io.tidelog.broker.network;

import io.vertx.core.Future;
import java.nio.ByteBuffer;
import java.util.Optional;
import org.apache.kafka.common.network.Send;

/** Turns one request frame into its response; the protocol layer implements it. */
@FunctionalInterface
public interface RequestProcessor {
  /**
   * Called on the connection's event loop, which the returned future must complete on.
   *
   * @param frame the request, without its size prefix
   * @param clientHost the client's IP address, as group members are described
   * @return the response to write, or empty when the request gets none ({@code acks=0}); a failed
   *     future closes the connection
   */
  Future<Optional<Send>> process(ByteBuffer frame, String clientHost);
}
