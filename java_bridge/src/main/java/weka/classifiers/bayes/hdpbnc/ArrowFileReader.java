/*
 *   This program is free software: you can redistribute it and/or modify
 *   it under the terms of the GNU General Public License as published by
 *   the Free Software Foundation, either version 3 of the License, or
 *   (at your option) any later version.
 */

package weka.classifiers.bayes.hdpbnc;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.arrow.flatbuf.Block;
import org.apache.arrow.flatbuf.Buffer;
import org.apache.arrow.flatbuf.FieldNode;
import org.apache.arrow.flatbuf.FloatingPoint;
import org.apache.arrow.flatbuf.Footer;
import org.apache.arrow.flatbuf.Int;
import org.apache.arrow.flatbuf.KeyValue;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.Precision;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.flatbuf.Schema;
import org.apache.arrow.flatbuf.Type;

/**
 * A small reader of Arrow IPC <em>files</em> (the random-access format: magic, messages, footer),
 * built directly on the flatbuffer classes of {@code arrow-format}, so that it needs neither
 * arrow-vector nor arrow-memory (and no {@code --add-opens} on JDK 17).
 *
 * <p>It reads what the hdp-bnc model file uses: uncompressed, non-dictionary columns of type uint16, int32
 * and float64, with or without nulls, lists and structs of them (without null lists, structs or items: the
 * model file's cells), and the schema's custom metadata. Anything else is
 * refused with an {@link IOException} that names the column.
 *
 * <p>Layout (Arrow columnar format, "IPC File Format"): {@code ARROW1} plus 2 bytes of padding; the
 * stream messages; the footer flatbuffer; its length as a little-endian int32; {@code ARROW1}. Each
 * record batch block points at an encapsulated message ({@code 0xFFFFFFFF}, an int32 metadata length,
 * the {@code Message} flatbuffer, padding) followed by the message body, which holds the buffers: depth
 * first, one field node per field and, per field, the validity buffer and then the data buffer
 * (fixed-width types), the int32 offsets (a list, whose item field follows), or nothing more (a struct,
 * whose fields follow).
 */
public final class ArrowFileReader {

  /** The column types this reader understands. */
  public enum ColumnType {
    UINT16("uint16", 2), INT32("int32", 4), FLOAT64("double", 8),
    /** A list: {@link Column#offsets} holds each row's first item, {@link Column#children} the items. */
    LIST("list", 0),
    /** A struct: {@link Column#children} holds its fields, each as long as the struct. */
    STRUCT("struct", 0);

    /** The type's name as pyarrow prints it. */
    final String arrowName;
    /** Bytes per value of a fixed-width type, else 0. */
    final int width;

    ColumnType(String arrowName, int width) {
      this.arrowName = arrowName;
      this.width = width;
    }
  }

  /** A field of the schema: its name, type, nullability and, for a list or a struct, its child fields. */
  public static final class Field {
    /** The field's name. */
    public final String name;
    /** Its type. */
    public final ColumnType type;
    /** Whether the schema lets it hold nulls. */
    public final boolean nullable;
    /** A list's item field, a struct's fields; empty for the others. */
    public final List<Field> children;

    Field(String name, ColumnType type, boolean nullable, List<Field> children) {
      this.name = name;
      this.type = type;
      this.nullable = nullable;
      this.children = Collections.unmodifiableList(children);
    }

    /**
     * The type as pyarrow compares types: a list's or a struct's child fields with their
     * nullability, a struct's fields with their names (a list's item name does not count).
     *
     * @return for instance {@code list<struct<value: uint16 not null, log_prob: double not null> not null>}
     */
    public String typeString() {
      if (type == ColumnType.LIST) {
        Field item = children.get(0);
        return "list<" + item.typeString() + (item.nullable ? "" : " not null") + ">";
      }
      if (type == ColumnType.STRUCT) {
        StringBuilder sb = new StringBuilder("struct<");
        for (int i = 0; i < children.size(); i++) {
          Field c = children.get(i);
          sb.append(i > 0 ? ", " : "").append(c.name).append(": ").append(c.typeString())
            .append(c.nullable ? "" : " not null");
        }
        return sb.append('>').toString();
      }
      return type.arrowName;
    }

    /** @return {@code name: type}, the type as {@link #typeString()} */
    @Override
    public String toString() {
      return name + ": " + typeString();
    }

    /** Field nodes of this field and its children. */
    int fieldNodes() {
      int n = 1;
      for (Field c : children) {
        n += c.fieldNodes();
      }
      return n;
    }

    /** Buffers of this field and its children. */
    int buffers() {
      int n = type == ColumnType.STRUCT ? 1 : 2;
      for (Field c : children) {
        n += c.buffers();
      }
      return n;
    }
  }

  /** One column of one record batch, decoded into plain Java arrays. */
  public static final class Column {
    /** The field's name. */
    public final String name;
    /** The column's type. */
    public final ColumnType type;
    /** Number of rows. */
    public final int length;
    /** Validity per row, or null when the column has no nulls. */
    public final boolean[] valid;
    /**
     * The values: int[] (uint16 and int32) or double[]; null for a column read without its values
     * ({@link ArrowFileReader#values(Column)} decodes them), for a list and for a struct.
     */
    public final Object values;
    /**
     * A fixed-width column's values as the file holds them (little-endian, exactly {@code length} values,
     * read only; position 0), or null for a list or a struct: what a checksum over the values reads without
     * encoding them again.
     */
    public final ByteBuffer raw;
    /** A list column's offsets ({@code length + 1}, from 0, non-decreasing, the last one its items), else null. */
    public final int[] offsets;
    /** A list column's offsets as the file holds them (little-endian int32, {@code length + 1}), else null. */
    public final ByteBuffer rawOffsets;
    /** A list's items (one column), a struct's fields; empty for the others. */
    public final List<Column> children;

    Column(String name, ColumnType type, int length, boolean[] valid, Object values, ByteBuffer raw, int[] offsets,
        ByteBuffer rawOffsets, List<Column> children) {
      this.name = name;
      this.type = type;
      this.length = length;
      this.valid = valid;
      this.values = values;
      this.raw = raw;
      this.offsets = offsets;
      this.rawOffsets = rawOffsets;
      this.children = Collections.unmodifiableList(children);
    }
  }

  private static final byte[] MAGIC = "ARROW1".getBytes(StandardCharsets.US_ASCII);

  private final ByteBuffer m_Data;
  private final List<Field> m_Fields = new ArrayList<>();
  private final Map<String, byte[]> m_Metadata = new LinkedHashMap<>();
  private final List<Block> m_Blocks = new ArrayList<>();

  /**
   * Parses the footer and the schema of an Arrow IPC file held in memory.
   *
   * @param data the whole file
   * @throws IOException if the bytes are not a complete Arrow IPC file, or use types this reader does
   *           not support
   */
  public ArrowFileReader(byte[] data) throws IOException {
    m_Data = ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN);
    try {
      readFooter(data);
    } catch (RuntimeException e) { // flatbuffer accessors on garbage: index/argument errors
      throw new IOException("not a complete Arrow IPC file (corrupted footer: " + e + ")", e);
    }
  }

  private void readFooter(byte[] data) throws IOException {
    int n = data.length;
    if (n < MAGIC.length * 2 + 2 + 4 || !startsWithMagic(data, 0) || !startsWithMagic(data, n - MAGIC.length)) {
      throw new IOException("not a complete Arrow IPC file (no ARROW1 magic at both ends: truncated, corrupted or "
        + "another format)");
    }
    int footerLength = m_Data.getInt(n - MAGIC.length - 4);
    int footerStart = n - MAGIC.length - 4 - footerLength;
    if (footerLength <= 0 || footerStart < 8) {
      throw new IOException("not a complete Arrow IPC file (bad footer length " + footerLength + ")");
    }
    ByteBuffer fb = slice(footerStart, footerLength);
    Footer footer = Footer.getRootAsFooter(fb);
    Schema schema = footer.schema();
    if (schema == null) {
      throw new IOException("not a complete Arrow IPC file (the footer has no schema)");
    }
    if (footer.dictionariesLength() > 0) {
      throw new IOException("dictionary-encoded Arrow files are not supported");
    }
    for (int i = 0; i < schema.customMetadataLength(); i++) {
      KeyValue kv = schema.customMetadata(i);
      m_Metadata.put(kv.key(), bytes(kv.valueAsByteBuffer()));
    }
    for (int i = 0; i < schema.fieldsLength(); i++) {
      m_Fields.add(field(schema.fields(i), 0));
    }
    for (int i = 0; i < footer.recordBatchesLength(); i++) {
      m_Blocks.add(footer.recordBatches(new Block(), i));
    }
  }

  /** The deepest nesting of lists and structs read (the model file's cells are 2 deep). */
  static final int MAX_FIELD_DEPTH = 8;

  /** A field of the schema, with its children: lists have one, structs any number. */
  private static Field field(org.apache.arrow.flatbuf.Field f, int depth) throws IOException {
    String name = f.name();
    if (f.dictionary() != null) {
      throw new IOException("column '" + name + "' is dictionary-encoded, which is not supported");
    }
    ColumnType type = columnType(f);
    int nChildren = f.childrenLength();
    if ((type == ColumnType.LIST ? nChildren != 1 : type == ColumnType.STRUCT ? nChildren < 1 : nChildren != 0)
      || depth > MAX_FIELD_DEPTH) {
      throw new IOException("column '" + name + "' of type " + type.arrowName + " has " + nChildren
        + " child fields, which is not supported");
    }
    List<Field> children = new ArrayList<>(nChildren);
    for (int i = 0; i < nChildren; i++) {
      children.add(field(f.children(i), depth + 1));
    }
    return new Field(name, type, f.nullable(), children);
  }

  private static ColumnType columnType(org.apache.arrow.flatbuf.Field f) throws IOException {
    byte t = f.typeType();
    switch (t) {
      case Type.Int: {
        Int it = (Int) f.type(new Int());
        if (it.isSigned() && it.bitWidth() == 32) {
          return ColumnType.INT32;
        }
        if (!it.isSigned() && it.bitWidth() == 16) {
          return ColumnType.UINT16;
        }
        throw new IOException("column '" + f.name() + "' has type " + (it.isSigned() ? "int" : "uint")
          + it.bitWidth() + "; only uint16 and int32 are supported");
      }
      case Type.FloatingPoint: {
        FloatingPoint fp = (FloatingPoint) f.type(new FloatingPoint());
        if (fp.precision() == Precision.DOUBLE) {
          return ColumnType.FLOAT64;
        }
        throw new IOException("column '" + f.name() + "' is a float of precision " + fp.precision()
          + "; only float64 is supported");
      }
      case Type.List:
        return ColumnType.LIST;
      case Type.Struct_:
        return ColumnType.STRUCT;
      default:
        throw new IOException("column '" + f.name() + "' has Arrow type "
          + (t >= 0 && t < Type.names.length ? Type.names[t] : Byte.toString(t)) + ", which is not supported");
    }
  }

  private static boolean startsWithMagic(byte[] data, int at) {
    for (int i = 0; i < MAGIC.length; i++) {
      if (data[at + i] != MAGIC[i]) {
        return false;
      }
    }
    return true;
  }

  private static byte[] bytes(ByteBuffer b) {
    if (b == null) {
      return new byte[0];
    }
    byte[] out = new byte[b.remaining()];
    b.duplicate().get(out);
    return out;
  }

  private ByteBuffer slice(long start, long length) throws IOException {
    if (start < 0 || length < 0 || start + length > m_Data.capacity()) {
      throw new IOException("not a complete Arrow IPC file (a block points outside the file: truncated?)");
    }
    return window(m_Data, start, length);
  }

  /** Bytes {@code start} to {@code start + length} of {@code b} (which holds them), little-endian, from 0. */
  private static ByteBuffer window(ByteBuffer b, long start, long length) {
    ByteBuffer d = b.duplicate();
    d.position((int) start);
    d.limit((int) (start + length));
    return d.slice().order(ByteOrder.LITTLE_ENDIAN);
  }

  /** @return the schema's fields, with their children */
  public List<Field> fields() {
    return Collections.unmodifiableList(m_Fields);
  }

  /** @return the column names, in schema order */
  public List<String> fieldNames() {
    List<String> out = new ArrayList<>();
    for (Field f : m_Fields) {
      out.add(f.name);
    }
    return out;
  }

  /** @return the schema's custom metadata: key to raw (UTF-8) value bytes, in file order */
  public Map<String, byte[]> metadata() {
    return Collections.unmodifiableMap(m_Metadata);
  }

  /** @return the number of record batches */
  public int numBatches() {
    return m_Blocks.size();
  }

  /**
   * Decodes one record batch, its fixed-width columns' values only if {@code values} (else their
   * {@link Column#values} are null and {@link #values(Column)} decodes them from {@link Column#raw} when
   * wanted: a reader that checks a large file first and then uses one batch at a time holds one batch's
   * arrays at a time).
   *
   * @param index the batch, 0-based
   * @param values whether to decode the fixed-width columns' values now
   * @return its columns, in schema order
   * @throws IOException if the batch is truncated, compressed or inconsistent with the schema
   */
  public List<Column> readBatch(int index, boolean values) throws IOException {
    try {
      return decodeBatch(index, values);
    } catch (RuntimeException e) {
      throw new IOException("unreadable record batch " + index + " (" + e + ")", e);
    }
  }

  /**
   * A column's values, int[] (uint16 and int32) or double[] (null for a list or a struct): {@link Column#values},
   * or decoded now from {@link Column#raw} for a fixed-width column read without them.
   */
  public static Object values(Column c) {
    if (c.values != null || c.raw == null) {
      return c.values;
    }
    return fixedWidth(c.type, c.raw.duplicate().order(ByteOrder.LITTLE_ENDIAN), c.length);
  }

  /** Where decoding one record batch is: its body, its message, the next field node and buffer. */
  private final class BatchCursor {
    final ByteBuffer body;
    final RecordBatch rb;
    final boolean decodeValues;
    int fieldNode;
    int buffer;

    BatchCursor(ByteBuffer body, RecordBatch rb, boolean decodeValues) {
      this.body = body;
      this.rb = rb;
      this.decodeValues = decodeValues;
    }

    ByteBuffer nextBuffer() throws IOException {
      return buffer(body, rb, buffer++);
    }
  }

  private List<Column> decodeBatch(int index, boolean decodeValues) throws IOException {
    Block block = m_Blocks.get(index);
    long offset = block.offset();
    int metaLength = block.metaDataLength();
    ByteBuffer prefix = slice(offset, Math.min(8, metaLength));
    int skip = 4;
    int fbLength = prefix.getInt(0);
    if (fbLength == -1) { // continuation marker, then the length
      fbLength = prefix.getInt(4);
      skip = 8;
    }
    if (fbLength <= 0 || skip + fbLength > metaLength) {
      throw new IOException("record batch " + index + ": bad message length " + fbLength);
    }
    Message message = Message.getRootAsMessage(slice(offset + skip, fbLength));
    if (message.headerType() != MessageHeader.RecordBatch) {
      throw new IOException("block " + index + " is not a record batch");
    }
    RecordBatch rb = (RecordBatch) message.header(new RecordBatch());
    if (rb.compression() != null) {
      throw new IOException("record batch " + index + " is compressed, which is not supported");
    }
    ByteBuffer body = slice(offset + metaLength, block.bodyLength());
    long rows = rb.length();
    if (rows < 0 || rows > Integer.MAX_VALUE) {
      throw new IOException("record batch " + index + ": bad length " + rows);
    }
    int nNodes = 0;
    int nBuffers = 0;
    for (Field f : m_Fields) {
      nNodes += f.fieldNodes();
      nBuffers += f.buffers();
    }
    if (rb.nodesLength() != nNodes || rb.buffersLength() != nBuffers) {
      throw new IOException("record batch " + index + " has " + rb.nodesLength() + " field nodes and "
        + rb.buffersLength() + " buffers, the schema " + nNodes + " and " + nBuffers);
    }
    BatchCursor at = new BatchCursor(body, rb, decodeValues);
    List<Column> out = new ArrayList<>(m_Fields.size());
    for (Field f : m_Fields) {
      out.add(column(at, f, rows, false));
    }
    return out;
  }

  /**
   * The column of field {@code f}, which must have {@code rows} rows; its children's columns follow it
   * depth first. Nulls are read in a top-level column; a list, a struct and their children have none.
   */
  private Column column(BatchCursor at, Field f, long rows, boolean nested) throws IOException {
    FieldNode node = at.rb.nodes(new FieldNode(), at.fieldNode++);
    String name = f.name;
    if (node.length() != rows) {
      throw new IOException("column '" + name + "' has " + node.length() + " rows, " + rows + " expected");
    }
    int n = (int) rows;
    boolean nullsRefused = nested || f.type == ColumnType.LIST || f.type == ColumnType.STRUCT;
    if (node.nullCount() != 0 && (nullsRefused || node.nullCount() < 0 || node.nullCount() > n)) {
      throw new IOException("column '" + name + "': " + node.nullCount() + " nulls"
        + (nullsRefused ? " in a list or a struct, which is not supported" : ""));
    }
    ByteBuffer validity = at.nextBuffer();
    boolean[] valid = node.nullCount() > 0 ? bits(validity, n, name) : null;
    switch (f.type) {
      case LIST: {
        ByteBuffer rawOffsets = window(need(at.nextBuffer(), 4L * (n + 1L), name), 0, 4 * (n + 1)).asReadOnlyBuffer();
        int[] offsets = new int[n + 1];
        rawOffsets.duplicate().order(ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(offsets);
        if (offsets[0] != 0) {
          throw new IOException("column '" + name + "': bad list offsets");
        }
        for (int i = 0; i < n; i++) {
          if (offsets[i + 1] < offsets[i]) {
            throw new IOException("column '" + name + "': bad list offsets");
          }
        }
        Column items = column(at, f.children.get(0), offsets[n], true);
        return new Column(name, f.type, n, null, null, null, offsets, rawOffsets, Collections.singletonList(items));
      }
      case STRUCT: {
        List<Column> children = new ArrayList<>(f.children.size());
        for (Field c : f.children) {
          children.add(column(at, c, n, true));
        }
        return new Column(name, f.type, n, null, null, null, null, null, children);
      }
      case UINT16:
      case INT32:
      case FLOAT64: {
        long bytes = (long) f.type.width * n;
        ByteBuffer d = need(at.nextBuffer(), bytes, name); // so bytes fits the buffer's int capacity
        return new Column(name, f.type, n, valid, at.decodeValues ? fixedWidth(f.type, d, n) : null,
          window(d, 0, bytes).asReadOnlyBuffer(), null, null, Collections.emptyList());
      }
      default:
        throw new AssertionError(f.type);
    }
  }

  /** The values of a fixed-width column: int[] (uint16 and int32) or double[]. */
  private static Object fixedWidth(ColumnType type, ByteBuffer d, int n) {
    d = d.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    switch (type) {
      case UINT16: {
        java.nio.ShortBuffer s = d.asShortBuffer();
        int[] a = new int[n];
        for (int i = 0; i < n; i++) {
          a[i] = s.get(i) & 0xFFFF;
        }
        return a;
      }
      case INT32: {
        int[] a = new int[n];
        d.asIntBuffer().get(a);
        return a;
      }
      default: {
        double[] a = new double[n];
        d.asDoubleBuffer().get(a);
        return a;
      }
    }
  }

  private static ByteBuffer buffer(ByteBuffer body, RecordBatch rb, int i) throws IOException {
    Buffer b = rb.buffers(new Buffer(), i);
    long off = b.offset();
    long len = b.length();
    if (off < 0 || len < 0 || off + len > body.capacity()) {
      throw new IOException("a buffer points outside its record batch (truncated file?)");
    }
    return window(body, off, len);
  }

  private static ByteBuffer need(ByteBuffer b, long bytes, String name) throws IOException {
    if (b.capacity() < bytes) {
      throw new IOException("column '" + name + "': data buffer too short");
    }
    return b;
  }

  private static boolean[] bits(ByteBuffer b, int n, String name) throws IOException {
    need(b, (n + 7L) / 8, name);
    boolean[] out = new boolean[n];
    for (int i = 0; i < n; i++) {
      out[i] = (b.get(i >>> 3) & (1 << (i & 7))) != 0;
    }
    return out;
  }
}
