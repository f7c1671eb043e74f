package io.tidelog.broker;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.RequestHeader;

/**
 * A blocking socket that speaks Kafka's framing, for tests that need exact versions or bytes no
 * real client would send. Requests and responses are built and parsed by kafka-clients itself.
 */
final class RawKafkaClient implements AutoCloseable {
  private static final int READ_TIMEOUT_MS = 10_000;
  private final Socket socket;
  private final DataInputStream in;
  private final OutputStream out;
  private int correlationId;

  RawKafkaClient(int port) throws IOException {
    this(port, READ_TIMEOUT_MS);
  }

  RawKafkaClient(int port, int readTimeoutMs) throws IOException {
    socket = new Socket("127.0.0.1", port);
    socket.setSoTimeout(readTimeoutMs);
    in = new DataInputStream(socket.getInputStream());
    out = socket.getOutputStream();
  }

  /**
   * A client authenticated with SASL PLAIN as {@code user}: SaslHandshake v1, then one
   * SaslAuthenticate carrying the PLAIN token.
   *
   * @throws IOException when the broker does not accept it
   */
  static RawKafkaClient plain(int port, String user, String password) throws IOException {
    RawKafkaClient client = new RawKafkaClient(port);
    var handshake =
        (org.apache.kafka.common.requests.SaslHandshakeResponse)
            client.send(
                new org.apache.kafka.common.requests.SaslHandshakeRequest(
                    new org.apache.kafka.common.message.SaslHandshakeRequestData()
                        .setMechanism("PLAIN"),
                    (short) 1));
    byte[] token =
        ("\0" + user + "\0" + password).getBytes(java.nio.charset.StandardCharsets.UTF_8);
    var authenticated =
        (org.apache.kafka.common.requests.SaslAuthenticateResponse)
            client.send(
                new org.apache.kafka.common.requests.SaslAuthenticateRequest(
                    new org.apache.kafka.common.message.SaslAuthenticateRequestData()
                        .setAuthBytes(token),
                    (short) 2));
    if (handshake.error() != org.apache.kafka.common.protocol.Errors.NONE
        || authenticated.error() != org.apache.kafka.common.protocol.Errors.NONE) {
      client.close();
      throw new IOException(
          "SASL PLAIN as " + user + " failed: " + handshake.error() + ", " + authenticated.error());
    }
    return client;
  }

  AbstractResponse send(AbstractRequest request) throws IOException {
    RequestHeader header =
        new RequestHeader(request.apiKey(), request.version(), "raw-test", ++correlationId);
    ByteBuffer body = request.serializeWithHeader(header);
    sendFrame(body);
    ByteBuffer response = ByteBuffer.wrap(readFrame());
    return AbstractResponse.parseResponse(response, header);
  }

  void sendFrame(ByteBuffer body) throws IOException {
    byte[] frame = new byte[4 + body.remaining()];
    ByteBuffer.wrap(frame).putInt(body.remaining()).put(body);
    sendBytes(frame);
  }

  void sendBytes(byte[] bytes) throws IOException {
    out.write(bytes);
    out.flush();
  }

  byte[] readFrame() throws IOException {
    int size = in.readInt();
    byte[] bytes = new byte[size];
    in.readFully(bytes);
    return bytes;
  }

  /** Whether the broker closed the connection (rather than answering) within the read timeout. */
  boolean closedByBroker() throws IOException {
    try {
      return in.read() == -1;
    } catch (EOFException | java.net.SocketException e) {
      return true;
    } catch (SocketTimeoutException e) {
      return false;
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
