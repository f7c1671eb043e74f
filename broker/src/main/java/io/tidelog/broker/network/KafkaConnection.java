package io.tidelog.broker.network;

import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.internal.net.NetSocketInternal;
import io.vertx.core.parsetools.RecordParser;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Optional;
import org.apache.kafka.common.network.Send;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection: size-prefixed frames in, responses out in request order while many
 * requests are in flight. At most {@link #IN_FLIGHT_MAX} requests wait for their turn; beyond that,
 * and while the socket's write queue is full, the connection stops reading (back-pressure). Event
 * loop only.
 */
final class KafkaConnection {
  static final int IN_FLIGHT_MAX = 64;
  private static final int SIZE_PREFIX_BYTES = 4;
  private static final Logger LOG = LoggerFactory.getLogger(KafkaConnection.class);

  private final NetSocketInternal socket;
  private final RecordParser parser;
  private final RequestProcessor processor;
  private final int requestMaxBytes;
  private final String id;
  private final SocketWriter writer;
  private final ArrayDeque<Future<Optional<Send>>> inFlight = new ArrayDeque<>();
  private boolean expectingSize = true;
  private boolean closed;

  KafkaConnection(NetSocketInternal socket, RequestProcessor processor, int requestMaxBytes) {
    this.socket = socket;
    this.processor = processor;
    this.requestMaxBytes = requestMaxBytes;
    this.id = socket.localAddress() + "-" + socket.remoteAddress();
    this.writer = new SocketWriter(socket);
    this.parser = RecordParser.newFixed(SIZE_PREFIX_BYTES, socket);
    parser.handler(this::onBytes);
    parser.exceptionHandler(this::onReadFailure);
    socket.closeHandler(v -> closed = true);
    socket.drainHandler(v -> maybeResume());
  }

  private void onBytes(Buffer buffer) {
    if (closed) {
      return; // bytes the parser still held when the connection was closed: never served
    }
    if (expectingSize) {
      int size = buffer.getInt(0);
      if (size <= 0 || size > requestMaxBytes) {
        close(
            "a request frame of "
                + size
                + " bytes is outside 1.."
                + requestMaxBytes
                + " (socket.request.max.bytes)");
        return;
      }
      expectingSize = false;
      parser.fixedSizeMode(size);
      return;
    }
    expectingSize = true;
    parser.fixedSizeMode(SIZE_PREFIX_BYTES);
    Future<Optional<Send>> response = processor.process(ByteBuffer.wrap(buffer.getBytes()), id);
    inFlight.add(response);
    response.onComplete(done -> writeCompleted());
    if (inFlight.size() >= IN_FLIGHT_MAX) {
      parser.pause();
    }
  }

  private void onReadFailure(Throwable e) {
    if (e instanceof IOException) {
      LOG.debug("Connection {} failed: {}", id, e.toString()); // the client went away
      closed = true;
      socket.close();
    } else {
      close("read failed: " + e);
    }
  }

  private void writeCompleted() {
    while (!closed && !inFlight.isEmpty() && inFlight.peek().isComplete()) {
      Future<Optional<Send>> head = inFlight.poll();
      if (head.failed()) {
        close("the request could not be served: " + head.cause());
        return;
      }
      Optional<Send> send = head.result();
      if (send.isPresent()) {
        try {
          writer.write(send.get());
        } catch (IOException e) {
          close("writing a response failed: " + e);
          return;
        }
      }
    }
    maybeResume();
  }

  private void maybeResume() {
    if (!closed && inFlight.size() < IN_FLIGHT_MAX && !socket.writeQueueFull()) {
      parser.resume();
    } else if (socket.writeQueueFull()) {
      parser.pause();
    }
  }

  private void close(String reason) {
    if (!closed) {
      LOG.warn("Closing connection {}: {}", id, reason);
      closed = true;
      parser.pause();
      socket.close();
    }
  }
}
